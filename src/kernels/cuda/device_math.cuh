// Device helpers shared by the CUDA kernels: warp/block sums and SiLU (included by .cu files only).
#pragma once

namespace clover::kernels::cuda {

inline constexpr int kWarpSize = 32;

// Returns the sum of `v` over the 32 lanes of the calling warp, in every lane.
__device__ __forceinline__ float WarpSum(float v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Returns the sum of `v` over the calling block (blockDim.x a multiple of 32, at most 1024), in
// every thread. `shared` holds 32 floats; the call contains __syncthreads, so every thread of the
// block must reach it.
__device__ __forceinline__ float BlockSum(float v, float* shared) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int n_warps = blockDim.x / kWarpSize;
  v = WarpSum(v);
  __syncthreads();  // `shared` may still be read by a previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < n_warps ? shared[lane] : 0.0f;
  return WarpSum(v);
}

// SiLU in the form of kernels/ref/activations.h (x / (1 + e^-x), not x * sigmoid(x)), so the
// rounding matches the reference up to expf's last bits.
__device__ __forceinline__ float Silu(float x) { return x / (1.0f + expf(-x)); }

}  // namespace clover::kernels::cuda
