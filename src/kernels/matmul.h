// Multi-threaded matmul of f32 activation rows by an [out, in] weight matrix (the hot path).
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "kernels/kernel_context.h"

namespace clover::kernels {

// Does y[r][o] = sum_i x[r][i] * w[o][i] for r < n_rows, o < w.shape[0]; `w` is [out, in] of a
// WeightType (checked by the caller at load), x rows hold `in` = w.shape[1] floats. Output rows
// are split over the pool.
void MatMul(const KernelContext& ctx, const float* x, int64_t n_rows, int64_t x_stride,
            const TensorView& w, float* y, int64_t y_stride);

}  // namespace clover::kernels
