// Matmul: cuBLAS GemmEx for F32/BF16 weights, a dequantizing kernel for Q8_0 blocks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch_args.h"
#include "kernels/cuda/matmul.h"

namespace clover::kernels::cuda {
namespace {

constexpr int64_t kQ8_0Block = 32;       // elements per block
constexpr int64_t kQ8_0BlockBytes = 34;  // f16 scale + 32 x int8

// Rounds the f32 activations to BF16 (nearest-even, as F32ToBF16) into a dense [n_rows][in].
__global__ void ToBF16Kernel(const float* x, int64_t x_stride, int64_t in, __nv_bfloat16* xb) {
  const int64_t row = blockIdx.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x; i < in;
       i += static_cast<int64_t>(gridDim.y) * blockDim.x)
    xb[row * in + i] = __float2bfloat16_rn(x[row * x_stride + i]);
}

// One warp per output o and up to kRowTile activation rows per block row of the grid. Each lane
// decodes 4 consecutive weights of one block (8 lanes cover a block, a warp 4 blocks per step),
// so the warp reads 136 contiguous weight bytes per step and the activations coalesce too.
constexpr int kQ8Warps = 4;
constexpr int kRowTile = 8;

__global__ void MatMulQ8_0Kernel(const float* x, int64_t n_rows, int64_t x_stride, const uint8_t* w,
                                 int64_t row_bytes, int64_t in, int64_t out, float* y,
                                 int64_t y_stride) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kQ8Warps + threadIdx.x / kWarpSize;
  if (o >= out) return;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kRowTile;
  const int rows = n_rows - r0 < kRowTile ? static_cast<int>(n_rows - r0) : kRowTile;
  const uint8_t* wr = w + o * row_bytes;
  const int64_t n_blocks = in / kQ8_0Block;
  const int k4 = (lane % 8) * 4;
  float acc[kRowTile] = {};
  for (int64_t b = lane / 8; b < n_blocks; b += 4) {
    const uint8_t* blk = wr + b * kQ8_0BlockBytes;
    // Blocks are 34 bytes, so only 2-byte alignment holds: read the scale and the int8 pairs
    // as 16-bit words.
    const float d = __half2float(__ushort_as_half(*reinterpret_cast<const uint16_t*>(blk)));
    const uint16_t q01 = *reinterpret_cast<const uint16_t*>(blk + 2 + k4);
    const uint16_t q23 = *reinterpret_cast<const uint16_t*>(blk + 4 + k4);
    const float w0 = d * static_cast<int8_t>(q01 & 0xff);
    const float w1 = d * static_cast<int8_t>(q01 >> 8);
    const float w2 = d * static_cast<int8_t>(q23 & 0xff);
    const float w3 = d * static_cast<int8_t>(q23 >> 8);
    const float* xb = x + r0 * x_stride + b * kQ8_0Block + k4;
#pragma unroll
    for (int r = 0; r < kRowTile; ++r) {
      if (r < rows) {
        const float* xr = xb + r * x_stride;
        acc[r] += w0 * xr[0] + w1 * xr[1] + w2 * xr[2] + w3 * xr[3];
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowTile; ++r) {
    const float sum = WarpSum(acc[r]);
    if (lane == 0 && r < rows) y[(r0 + r) * y_stride + o] = sum;
  }
}

Status CheckIntRange(const char* name, int64_t value) {
  return CheckAtMost("MatMul", name, value, INT_MAX);
}

Status GemmEx(Device& device, const DeviceMatrix& w, const void* x, cudaDataType x_type,
              int64_t n_rows, int64_t x_ld, float* y, int64_t y_stride) {
  const int64_t elem = w.dtype == DType::kF32 ? 4 : 2;
  if (w.row_bytes % elem != 0) {
    return InvalidArgument("cuda MatMul: row_bytes " + std::to_string(w.row_bytes) +
                           " is not a whole number of " + DTypeName(w.dtype) + " elements");
  }
  const int64_t w_ld = w.row_bytes / elem;
  CLOVER_TRY(CheckIntRange("w.rows", w.rows));
  CLOVER_TRY(CheckIntRange("w.cols", w.cols));
  CLOVER_TRY(CheckIntRange("n_rows", n_rows));
  CLOVER_TRY(CheckIntRange("w.row_bytes / element size", w_ld));
  CLOVER_TRY(CheckIntRange("x_stride", x_ld));
  CLOVER_TRY(CheckIntRange("y_stride", y_stride));
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major y[n_rows][out] is column-major out x n_rows: y^T = W x^T, where row-major W[out][in]
  // read column-major is in x out (transposed) and row-major x is in x n_rows (as is).
  return CublasStatus(
      cublasGemmEx(device.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(w.rows),
                   static_cast<int>(n_rows), static_cast<int>(w.cols), &alpha, w.data,
                   w.dtype == DType::kF32 ? CUDA_R_32F : CUDA_R_16BF, static_cast<int>(w_ld), x,
                   x_type, static_cast<int>(x_ld), &beta, y, CUDA_R_32F, static_cast<int>(y_stride),
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx(" + std::string(DTypeName(w.dtype)) + " weights, out " +
          std::to_string(w.rows) + ", in " + std::to_string(w.cols) + ", rows " +
          std::to_string(n_rows) + ")");
}

Status MatMulBF16(Device& device, const float* x, int64_t n_rows, int64_t x_stride,
                  const DeviceMatrix& w, float* y, int64_t y_stride) {
  CLOVER_ASSIGN_OR_RETURN(
      void* scratch, device.Scratch(static_cast<size_t>(n_rows * w.cols) * sizeof(__nv_bfloat16)));
  auto* xb = static_cast<__nv_bfloat16*>(scratch);
  constexpr int kThreads = 256;
  const dim3 grid(static_cast<unsigned>(n_rows),
                  static_cast<unsigned>(std::min<int64_t>((w.cols + kThreads - 1) / kThreads, 64)));
  ToBF16Kernel<<<grid, kThreads, 0, device.stream()>>>(x, x_stride, w.cols, xb);
  CLOVER_TRY(LaunchStatus("ToBF16Kernel"));
  return GemmEx(device, w, xb, CUDA_R_16BF, n_rows, w.cols, y, y_stride);
}

Status MatMulQ8_0(Device& device, const float* x, int64_t n_rows, int64_t x_stride,
                  const DeviceMatrix& w, float* y, int64_t y_stride) {
  if (w.cols % kQ8_0Block != 0) {
    return InvalidArgument("cuda MatMul: Q8_0 rows of " + std::to_string(w.cols) +
                           " elements, expected a multiple of 32");
  }
  CLOVER_TRY(
      CheckAtLeast("MatMul", "w.row_bytes", w.row_bytes, w.cols / kQ8_0Block * kQ8_0BlockBytes));
  if (w.row_bytes % 2 != 0 || reinterpret_cast<uintptr_t>(w.data) % 2 != 0) {
    return InvalidArgument("cuda MatMul: Q8_0 rows must start at even addresses (row_bytes " +
                           std::to_string(w.row_bytes) + ")");
  }
  const int64_t row_tiles = (n_rows + kRowTile - 1) / kRowTile;
  CLOVER_TRY(CheckAtMost("MatMul", "n_rows / 8", row_tiles, kMaxGridYZ));
  const dim3 grid(static_cast<unsigned>((w.rows + kQ8Warps - 1) / kQ8Warps),
                  static_cast<unsigned>(row_tiles));
  MatMulQ8_0Kernel<<<grid, kQ8Warps * kWarpSize, 0, device.stream()>>>(
      x, n_rows, x_stride, static_cast<const uint8_t*>(w.data), w.row_bytes, w.cols, w.rows, y,
      y_stride);
  return LaunchStatus("MatMulQ8_0Kernel");
}

}  // namespace

Status MatMul(Device& device, const float* x, int64_t n_rows, int64_t x_stride,
              const DeviceMatrix& w, float* y, int64_t y_stride) {
  CLOVER_TRY(CheckAtLeast("MatMul", "w.rows", w.rows, 1));
  CLOVER_TRY(CheckAtLeast("MatMul", "w.cols", w.cols, 1));
  CLOVER_TRY(CheckAtLeast("MatMul", "n_rows", n_rows, 0));
  CLOVER_TRY(CheckStride("MatMul", "x_stride", x_stride, w.cols));
  CLOVER_TRY(CheckStride("MatMul", "y_stride", y_stride, w.rows));
  if (w.dtype != DType::kF32 && w.dtype != DType::kBF16 && w.dtype != DType::kQ8_0) {
    return Unimplemented("cuda MatMul: weight dtype " + std::string(DTypeName(w.dtype)) +
                         " is not supported on the device yet (expected F32, BF16 or Q8_0)");
  }
  if (w.dtype != DType::kQ8_0) {
    CLOVER_TRY(CheckAtLeast("MatMul", "w.row_bytes", w.row_bytes,
                            w.cols * (w.dtype == DType::kF32 ? 4 : 2)));
  }
  if (n_rows == 0) return Status::Ok();
  switch (w.dtype) {
    case DType::kF32:
      return GemmEx(device, w, x, CUDA_R_32F, n_rows, x_stride, y, y_stride);
    case DType::kBF16:
      return MatMulBF16(device, x, n_rows, x_stride, w, y, y_stride);
    default:
      return MatMulQ8_0(device, x, n_rows, x_stride, w, y, y_stride);
  }
}

}  // namespace clover::kernels::cuda
