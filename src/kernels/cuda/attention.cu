// Attention: per (row, head) block, each warp runs an online softmax over every 4th key, then
// the warps' partial results are merged.
#include <cmath>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch_args.h"

namespace clover::kernels::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxHeadDim = 256;

// Lane l holds head dims l, l + 32, ... (kDims of them) of q and of the running output.
template <int kDims>
__global__ void __launch_bounds__(kWarps* kWarpSize)
    AttentionKernel(AttentionParams p, const float* q, int64_t q_stride, int64_t first_pos,
                    DeviceKv kv, float* out, int64_t out_stride) {
  __shared__ float warp_max[kWarps];
  __shared__ float warp_denom[kWarps];
  __shared__ float warp_acc[kWarps][kDims * kWarpSize];
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int h = blockIdx.x;
  const int64_t row = blockIdx.y;
  const int dh = p.head_dim;
  const int64_t kv_off = static_cast<int64_t>(h / (p.n_head / p.n_head_kv)) * dh;
  const float* qh = q + row * q_stride + static_cast<int64_t>(h) * dh;
  float qv[kDims], acc[kDims];
#pragma unroll
  for (int c = 0; c < kDims; ++c) {
    const int d = lane + kWarpSize * c;
    qv[c] = d < dh ? qh[d] : 0.0f;
    acc[c] = 0.0f;
  }
  const int64_t n_visible =
      p.mask == MaskMode::kCausal ? min(kv.n_positions, first_pos + row + 1) : kv.n_positions;
  float running_max = -INFINITY, denom = 0.0f;
  for (int64_t pos = warp; pos < n_visible; pos += kWarps) {
    const float* kr = kv.k + pos * kv.row_stride + kv_off;
    float dot = 0.0f;
#pragma unroll
    for (int c = 0; c < kDims; ++c) {
      const int d = lane + kWarpSize * c;
      if (d < dh) dot += qv[c] * kr[d];
    }
    const float score = p.scale * WarpSum(dot);
    const float new_max = fmaxf(running_max, score);
    const float rescale = expf(running_max - new_max);  // 0 for the first key (-inf)
    const float e = expf(score - new_max);
    denom = denom * rescale + e;
    const float* vr = kv.v + pos * kv.row_stride + kv_off;
#pragma unroll
    for (int c = 0; c < kDims; ++c) {
      const int d = lane + kWarpSize * c;
      acc[c] = acc[c] * rescale + (d < dh ? e * vr[d] : 0.0f);
    }
    running_max = new_max;
  }
  if (lane == 0) {
    warp_max[warp] = running_max;
    warp_denom[warp] = denom;
  }
#pragma unroll
  for (int c = 0; c < kDims; ++c) warp_acc[warp][lane + kWarpSize * c] = acc[c];
  __syncthreads();
  float block_max = -INFINITY;
  for (int w = 0; w < kWarps; ++w) block_max = fmaxf(block_max, warp_max[w]);
  // A warp that saw no key has max -inf and contributes nothing (and no NaN from -inf - -inf).
  float weight[kWarps], total = 0.0f;
  for (int w = 0; w < kWarps; ++w) {
    weight[w] = warp_max[w] == -INFINITY ? 0.0f : expf(warp_max[w] - block_max);
    total += warp_denom[w] * weight[w];
  }
  const float inv = total > 0.0f ? 1.0f / total : 0.0f;
  float* oh = out + row * out_stride + static_cast<int64_t>(h) * dh;
  for (int d = threadIdx.x; d < dh; d += blockDim.x) {
    float sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) sum += warp_acc[w][d] * weight[w];
    oh[d] = sum * inv;
  }
}

}  // namespace

Status Attention(Device& device, const AttentionParams& params, const float* q, int64_t q_stride,
                 int64_t n_rows, int64_t first_pos, const DeviceKv& kv, float* out,
                 int64_t out_stride) {
  constexpr const char* kOp = "Attention";
  CLOVER_TRY(CheckAtLeast(kOp, "n_head_kv", params.n_head_kv, 1));
  CLOVER_TRY(CheckAtLeast(kOp, "n_head", params.n_head, params.n_head_kv));
  if (params.n_head % params.n_head_kv != 0) {
    return InvalidArgument("cuda Attention: n_head " + std::to_string(params.n_head) +
                           " is not a multiple of n_head_kv " + std::to_string(params.n_head_kv));
  }
  CLOVER_TRY(CheckAtLeast(kOp, "head_dim", params.head_dim, 1));
  CLOVER_TRY(CheckAtMost(kOp, "head_dim", params.head_dim, kMaxHeadDim));
  CLOVER_TRY(CheckAtLeast(kOp, "n_rows", n_rows, 0));
  CLOVER_TRY(CheckAtMost(kOp, "n_rows", n_rows, kMaxGridYZ));
  CLOVER_TRY(CheckAtLeast(kOp, "first_pos", first_pos, 0));
  CLOVER_TRY(CheckAtLeast(kOp, "kv.n_positions", kv.n_positions, 0));
  const int64_t q_width = int64_t{params.n_head} * params.head_dim;
  CLOVER_TRY(CheckStride(kOp, "q_stride", q_stride, q_width));
  CLOVER_TRY(CheckStride(kOp, "out_stride", out_stride, q_width));
  CLOVER_TRY(CheckStride(kOp, "kv.row_stride", kv.row_stride,
                         int64_t{params.n_head_kv} * params.head_dim));
  if (n_rows == 0) return Status::Ok();
  const dim3 grid(static_cast<unsigned>(params.n_head), static_cast<unsigned>(n_rows));
  const int threads = kWarps * kWarpSize;
  if (params.head_dim <= 64) {
    AttentionKernel<2><<<grid, threads, 0, device.stream()>>>(params, q, q_stride, first_pos, kv,
                                                              out, out_stride);
  } else if (params.head_dim <= 128) {
    AttentionKernel<4><<<grid, threads, 0, device.stream()>>>(params, q, q_stride, first_pos, kv,
                                                              out, out_stride);
  } else {
    AttentionKernel<kMaxHeadDim / kWarpSize><<<grid, threads, 0, device.stream()>>>(
        params, q, q_stride, first_pos, kv, out, out_stride);
  }
  return LaunchStatus("AttentionKernel");
}

}  // namespace clover::kernels::cuda
