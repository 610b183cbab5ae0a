// L2 normalisation with the sum of squares in double.
#include "kernels/ref/l2_norm.h"

#include <cmath>

namespace clover::kernels::ref {

void L2Norm(float* x, int64_t n, float eps, float scale) {
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float s = static_cast<float>(scale / std::sqrt(ss + eps));
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

}  // namespace clover::kernels::ref
