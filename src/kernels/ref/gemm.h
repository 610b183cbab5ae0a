// Reference small f32 GEMM (GemmFn, kernel_table.h): plain loops, double accumulation.
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

void Gemm(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t n, int64_t k,
          int64_t m, float* c, int64_t c_stride, bool accumulate);

}  // namespace clover::kernels::ref
