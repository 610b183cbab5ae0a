// Reference small f32 GEMM: one double accumulator per output.
#include "kernels/ref/gemm.h"

namespace clover::kernels::ref {

void Gemm(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t n, int64_t k,
          int64_t m, float* c, int64_t c_stride, bool accumulate) {
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < m; ++j) {
      double acc = accumulate ? c[r * c_stride + j] : 0.0;
      for (int64_t i = 0; i < k; ++i)
        acc += static_cast<double>(a[r * a_stride + i]) * b[i * b_stride + j];
      c[r * c_stride + j] = static_cast<float>(acc);
    }
  }
}

}  // namespace clover::kernels::ref
