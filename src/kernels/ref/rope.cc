// Partial NeoX RoPE; angles in double so large positions keep their precision.
#include "kernels/ref/rope.h"

#include <cmath>

namespace clover::kernels::ref {

void RopeNeox(float* x, int rope_dim, int64_t pos, double theta) {
  const int half = rope_dim / 2;
  for (int i = 0; i < half; ++i) {
    const double inv_freq = std::pow(theta, -2.0 * i / rope_dim);
    const double angle = static_cast<double>(pos) * inv_freq;
    const float c = static_cast<float>(std::cos(angle));
    const float s = static_cast<float>(std::sin(angle));
    const float a = x[i];
    const float b = x[i + half];
    x[i] = a * c - b * s;
    x[i + half] = b * c + a * s;
  }
}

}  // namespace clover::kernels::ref
