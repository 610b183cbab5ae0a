// Greedy choice + confidence: one block per row, an argmax pass and an f64 sum-of-exponentials
// pass, both reduced over the block.
#include <cmath>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch_args.h"
#include "kernels/cuda/low_confidence.h"

namespace clover::kernels::cuda {
namespace {

constexpr int kThreads = 512;

struct ArgMax {
  float value;
  int32_t index;  // -1: nothing seen yet
};

// The better of two candidates: larger value, then lower index. Neither holds NaN (a NaN never
// enters, since `>` is false for it), and index -1 comes only with value -inf.
__device__ __forceinline__ ArgMax Better(ArgMax a, ArgMax b) {
  if (b.value > a.value ||
      (b.value == a.value && b.index >= 0 && (a.index < 0 || b.index < a.index)))
    return b;
  return a;
}

__device__ __forceinline__ double WarpSumF64(double v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void __launch_bounds__(kThreads)
    GreedyConfidenceKernel(const float* logits, int64_t stride, int64_t n_valid, int32_t mask_id,
                           int32_t* token, double* confidence) {
  __shared__ ArgMax warp_best[kThreads / kWarpSize];
  __shared__ double warp_sum[kThreads / kWarpSize];
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int64_t row = blockIdx.x;
  const float* l = logits + row * stride;
  // Each thread scans its columns in increasing order with a strict `>`, so it keeps the lowest
  // index of its maximum, as ChooseGreedy does over the whole row.
  ArgMax best{-INFINITY, -1};
  for (int64_t i = threadIdx.x; i < n_valid; i += kThreads) {
    if (i != mask_id && l[i] > best.value) best = {l[i], static_cast<int32_t>(i)};
  }
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const ArgMax other{__shfl_xor_sync(0xffffffffu, best.value, offset),
                       __shfl_xor_sync(0xffffffffu, best.index, offset)};
    best = Better(best, other);
  }
  if (lane == 0) warp_best[warp] = best;
  __syncthreads();
  best = warp_best[0];
  for (int w = 1; w < kThreads / kWarpSize; ++w) best = Better(best, warp_best[w]);
  if (best.index < 0) {
    if (threadIdx.x == 0) {
      token[row] = -1;
      confidence[row] = 0.0;
    }
    return;
  }
  // ChooseGreedy sums exp(double(l) - l_max) in f64; the same terms here, so the probability
  // agrees to f64 rounding and a threshold comparison on the host decides as on the CPU.
  const double max = best.value;
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < n_valid; i += kThreads) {
    if (i != mask_id && l[i] > -INFINITY) sum += exp(static_cast<double>(l[i]) - max);
  }
  sum = WarpSumF64(sum);
  if (lane == 0) warp_sum[warp] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < kThreads / kWarpSize; ++w) total += warp_sum[w];
    token[row] = best.index;
    confidence[row] = 1.0 / total;
  }
}

}  // namespace

Status GreedyConfidence(Device& device, const float* logits, int64_t n_rows, int64_t stride,
                        int64_t n_valid, int32_t mask_id, int32_t* token, double* confidence) {
  constexpr const char* kOp = "GreedyConfidence";
  CLOVER_TRY(CheckAtLeast(kOp, "n_valid", n_valid, 1));
  CLOVER_TRY(CheckAtMost(kOp, "n_valid", n_valid, INT32_MAX));
  CLOVER_TRY(CheckAtLeast(kOp, "n_rows", n_rows, 0));
  CLOVER_TRY(CheckAtMost(kOp, "n_rows", n_rows, kMaxGridX));
  CLOVER_TRY(CheckStride(kOp, "stride", stride, n_valid));
  CLOVER_TRY(CheckAtLeast(kOp, "mask_id", mask_id, -1));
  if (n_rows == 0) return Status::Ok();
  GreedyConfidenceKernel<<<static_cast<unsigned>(n_rows), kThreads, 0, device.stream()>>>(
      logits, stride, n_valid, mask_id, token, confidence);
  return LaunchStatus("GreedyConfidenceKernel");
}

}  // namespace clover::kernels::cuda
