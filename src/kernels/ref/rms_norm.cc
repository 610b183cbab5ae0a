// RMSNorm variants with the sum of squares in double.
#include "kernels/ref/rms_norm.h"

#include <cmath>

#include "kernels/ref/activations.h"

namespace clover::kernels::ref {
namespace {
float InverseRms(const float* x, int64_t n, float eps) {
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  return static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
}
}  // namespace

void RmsNorm(const float* x, const float* w, int64_t n, float eps, float* out) {
  const float s = InverseRms(x, n, eps);
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * s * (w ? w[i] : 1.0f);
}

void GatedRmsNorm(const float* o, const float* z, const float* w, int64_t n, float eps,
                  float* out) {
  const float s = InverseRms(o, n, eps);
  for (int64_t i = 0; i < n; ++i) out[i] = o[i] * s * w[i] * Silu(z[i]);
}

}  // namespace clover::kernels::ref
