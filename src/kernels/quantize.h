// Quantizers: f32 rows to GGUF weight blocks (Q8_0, Q4_K, Q6_K) and to the 8-bit activation
// blocks the integer matmul kernels read.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/status.h"

namespace clover::kernels {

// Activations of a quantized matmul: 32 consecutive floats as x[i] ~= d * q[i] with
// |q| <= 127, plus the sums of q over each half (the Q4_K min and Q6_K offset terms of the dot
// product need them, per 32 and per 16 elements).
struct ActBlock {
  float d;
  int16_t sum[2];
  int8_t q[32];
};
inline constexpr int64_t kActBlockSize = 32;

// Quantizes `n_rows` rows of `in` floats (`x_stride` apart) into `n_rows * in / 32` blocks, row
// after row. Round to nearest with d = max|x| / 127 over each `scale_block` elements (32, or 256
// so that the 8 blocks of a K-format super-block share one d and their integer sums can be added
// before the float conversion); `in` must be a multiple of `scale_block`.
void QuantizeActivations(const float* x, int64_t n_rows, int64_t x_stride, int64_t in,
                         ActBlock* out, int64_t scale_block = kActBlockSize);

// Returns true when QuantizeRow writes `dtype` (F32, F16, BF16, Q8_0, Q4_K, Q6_K).
bool QuantizeSupported(DType dtype);

// Writes `n` floats of `x` to `dst` laid out as `dtype` (DTypeBytes(dtype, n) bytes). `n` must be
// a multiple of the dtype's block size. Round-to-nearest with a per-block scale (and min) search
// that minimizes the squared error of each block (docs/formats.md, "Quantizers").
Status QuantizeRow(DType dtype, const float* x, int64_t n, void* dst);

}  // namespace clover::kernels
