// SwiGLU activation: one thread per element, a 2-D grid of (rows, column blocks).
#include "kernels/cuda/activations.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch_args.h"

namespace clover::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void SiluMulKernel(const float* gate, int64_t gate_stride, const float* up,
                              int64_t up_stride, int64_t n, float* out, int64_t out_stride) {
  const int64_t row = blockIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[row * out_stride + i] = Silu(gate[row * gate_stride + i]) * up[row * up_stride + i];
}

}  // namespace

Status SiluMul(Device& device, const float* gate, int64_t gate_stride, const float* up,
               int64_t up_stride, int64_t n, int64_t n_rows, float* out, int64_t out_stride) {
  constexpr const char* kOp = "SiluMul";
  CLOVER_TRY(CheckAtLeast(kOp, "n", n, 1));
  CLOVER_TRY(CheckAtLeast(kOp, "n_rows", n_rows, 0));
  CLOVER_TRY(CheckAtMost(kOp, "n_rows", n_rows, kMaxGridX));
  CLOVER_TRY(CheckAtMost(kOp, "n", n, kMaxGridYZ * kThreads));
  CLOVER_TRY(CheckStride(kOp, "gate_stride", gate_stride, n));
  CLOVER_TRY(CheckStride(kOp, "up_stride", up_stride, n));
  CLOVER_TRY(CheckStride(kOp, "out_stride", out_stride, n));
  if (n_rows == 0) return Status::Ok();
  const dim3 grid(static_cast<unsigned>(n_rows),
                  static_cast<unsigned>((n + kThreads - 1) / kThreads));
  SiluMulKernel<<<grid, kThreads, 0, device.stream()>>>(gate, gate_stride, up, up_stride, n, out,
                                                        out_stride);
  return LaunchStatus("SiluMulKernel");
}

}  // namespace clover::kernels::cuda
