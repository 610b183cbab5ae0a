// Matmul of f32 activation rows by a device-resident [out, in] weight matrix (kernels/matmul.h).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/status.h"
#include "kernels/cuda/device.h"

namespace clover::kernels::cuda {

// A weight matrix in device memory: row-major [rows = out, cols = in] of `dtype`, rows
// `row_bytes` apart. F32 and BF16 rows hold plain elements, Q8_0 rows GGUF blocks
// (kernels/quantize.h, docs/formats.md).
struct DeviceMatrix {
  DType dtype = DType::kF32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_bytes = 0;
};

// Does y[r][o] = sum_i x[r][i] * w[o][i] for r < n_rows, o < w.rows, like kernels::MatMul.
// F32 weights: cuBLAS in f32 (no TF32). BF16 weights: the activations are rounded to BF16 and
// cuBLAS multiplies BF16 x BF16 with f32 accumulation. Q8_0 weights: a dequantizing kernel with
// f32 activations and accumulation. Device pointers; Unimplemented for other dtypes.
Status MatMul(Device& device, const float* x, int64_t n_rows, int64_t x_stride,
              const DeviceMatrix& w, float* y, int64_t y_stride);

}  // namespace clover::kernels::cuda
