// Reference matmul kernels (scalar, double accumulation): activations x weight[out, in]^T.
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

// MatMulFn (kernel_table.h) for F32, BF16 and F16 weights.
void MatMulF32(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride);
void MatMulBF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride);
void MatMulF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride);
// MatMulFn for GGUF block-quantized weights: each weight row is dequantized (DequantizeRow),
// then dotted with every activation row in double.
void MatMulQ8_0(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride);
void MatMulQ4_K(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride);
void MatMulQ6_K(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride);

}  // namespace clover::kernels::ref
