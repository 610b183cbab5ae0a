// Reference (scalar) dequantization of plain and GGUF block-quantized rows to f32.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/status.h"

namespace clover::kernels::ref {

// Returns true when DequantizeRow handles `dtype`.
bool DequantizeSupported(DType dtype);

// Writes `n` f32 values decoded from `src` (laid out as `dtype`) to `dst`. `n` must be a multiple of
// the dtype's block size. kUnimplemented for dtypes without a reference decoder (Q2_K, Q3_K, ints).
Status DequantizeRow(DType dtype, const void* src, int64_t n, float* dst);

}  // namespace clover::kernels::ref
