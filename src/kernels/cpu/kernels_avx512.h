// AVX-512 kernels (compiled with -mavx512f/bw/vl/dq/bf16/vnni): matmul and vector ops.
#pragma once

#include <cstdint>

namespace clover::kernels {
struct ActBlock;
}  // namespace clover::kernels

namespace clover::kernels::avx512 {

// MatMulFn (kernel_table.h) per weight type; f32 accumulation with FMA.
void MatMulF32(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride);
void MatMulBF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride);
void MatMulF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride);
// QuantMatMulFn (kernel_table.h) per quantized weight type (quant_matmul-inl.h).
void QuantMatMulQ8_0(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                     int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride);
void QuantMatMulQ4_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                     int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride);
void QuantMatMulQ6_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                     int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride);
float Dot(const float* a, const float* b, int64_t n);
void Axpy(float alpha, const float* x, float* y, int64_t n);
void Scale(float alpha, float* y, int64_t n);

}  // namespace clover::kernels::avx512
