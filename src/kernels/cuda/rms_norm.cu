// RMSNorm kernels: one block per row, the sum of squares reduced over the block in f32.
#include <algorithm>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch_args.h"
#include "kernels/cuda/rms_norm.h"

namespace clover::kernels::cuda {
namespace {

// kGated: out = norm(x) * w * SiLU(z); otherwise out = norm(x) * (w ? w : 1).
template <bool kGated>
__global__ void RmsNormKernel(const float* x, int64_t x_stride, const float* z, int64_t z_stride,
                              const float* w, int64_t n, float eps, float* out,
                              int64_t out_stride) {
  __shared__ float partial[kWarpSize];
  const int64_t row = blockIdx.x;
  const float* xr = x + row * x_stride;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
  ss = BlockSum(ss, partial);
  const float s = 1.0f / sqrtf(ss / static_cast<float>(n) + eps);
  float* outr = out + row * out_stride;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    if constexpr (kGated) {
      outr[i] = xr[i] * s * w[i] * Silu(z[row * z_stride + i]);
    } else {
      outr[i] = xr[i] * s * (w ? w[i] : 1.0f);
    }
  }
}

// Enough threads for one element each up to 256 (GDN rows are 128 wide), a whole number of warps.
int ThreadsFor(int64_t n) {
  return static_cast<int>(std::min<int64_t>(256, (n + kWarpSize - 1) / kWarpSize * kWarpSize));
}

Status CheckNormArgs(const char* op, int64_t n, int64_t n_rows) {
  CLOVER_TRY(CheckAtLeast(op, "n", n, 1));
  CLOVER_TRY(CheckAtLeast(op, "n_rows", n_rows, 0));
  return CheckAtMost(op, "n_rows", n_rows, kMaxGridX);
}

}  // namespace

Status RmsNorm(Device& device, const float* x, int64_t x_stride, const float* w, int64_t n,
               int64_t n_rows, float eps, float* out, int64_t out_stride) {
  CLOVER_TRY(CheckNormArgs("RmsNorm", n, n_rows));
  CLOVER_TRY(CheckStride("RmsNorm", "x_stride", x_stride, n));
  CLOVER_TRY(CheckStride("RmsNorm", "out_stride", out_stride, n));
  if (n_rows == 0) return Status::Ok();
  RmsNormKernel<false><<<static_cast<unsigned>(n_rows), ThreadsFor(n), 0, device.stream()>>>(
      x, x_stride, nullptr, 0, w, n, eps, out, out_stride);
  return LaunchStatus("RmsNormKernel");
}

Status GatedRmsNorm(Device& device, const float* o, int64_t o_stride, const float* z,
                    int64_t z_stride, const float* w, int64_t n, int64_t n_rows, float eps,
                    float* out, int64_t out_stride) {
  CLOVER_TRY(CheckNormArgs("GatedRmsNorm", n, n_rows));
  CLOVER_TRY(CheckStride("GatedRmsNorm", "o_stride", o_stride, n));
  CLOVER_TRY(CheckStride("GatedRmsNorm", "z_stride", z_stride, n));
  CLOVER_TRY(CheckStride("GatedRmsNorm", "out_stride", out_stride, n));
  if (w == nullptr) return InvalidArgument("cuda GatedRmsNorm: w is null (the norm has a weight)");
  if (n_rows == 0) return Status::Ok();
  RmsNormKernel<true><<<static_cast<unsigned>(n_rows), ThreadsFor(n), 0, device.stream()>>>(
      o, o_stride, z, z_stride, w, n, eps, out, out_stride);
  return LaunchStatus("GatedRmsNormKernel");
}

}  // namespace clover::kernels::cuda
