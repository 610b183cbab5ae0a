// Delta-rule scan: one block per (v-head, 32 state columns), the state tile in registers.
#include "kernels/cuda/delta_rule.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch_args.h"

namespace clover::kernels::cuda {
namespace {

// Lane l of every warp owns state column j = 32 * blockIdx.y + l; warp w owns rows w, w + 8, ...
// (kRows of them). The state tile stays in registers for the whole scan and the column sums
// over rows meet in shared memory, so each token costs three block barriers.
constexpr int kWarps = 8;
constexpr int kMaxDk = 256;

template <int kRows>
__global__ void __launch_bounds__(kWarps* kWarpSize) DeltaRuleKernel(DeltaRuleArgs a) {
  __shared__ float k_sh[kWarps * kRows];
  __shared__ float q_sh[kWarps * kRows];
  __shared__ float part_u[kWarps][kWarpSize];
  __shared__ float part_o[kWarps][kWarpSize];
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int64_t h = blockIdx.x;
  const int64_t kh = h % a.hk;
  const int64_t j = static_cast<int64_t>(blockIdx.y) * kWarpSize + lane;
  const bool has_col = j < a.dv;
  float* S = a.state + h * a.dk * a.dv;
  float s[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int i = warp + kWarps * r;
    s[r] = has_col && i < a.dk ? S[i * a.dv + j] : 0.0f;
  }
  for (int64_t t = 0; t < a.n_rows; ++t) {
    // Rows past dk read k = q = 0, so padded state rows stay 0 and add nothing.
    for (int i = threadIdx.x; i < kWarps * kRows; i += blockDim.x) {
      const bool in = i < a.dk;
      k_sh[i] = in ? a.k[t * a.qk_stride + kh * a.dk + i] : 0.0f;
      q_sh[i] = in ? a.q[t * a.qk_stride + kh * a.dk + i] : 0.0f;
    }
    __syncthreads();
    const float decay = expf(a.g[t * a.gate_stride + h]);
    const float beta = a.beta[t * a.gate_stride + h];
    float p = 0.0f;
#pragma unroll
    for (int r = 0; r < kRows; ++r) p += k_sh[warp + kWarps * r] * s[r];
    part_u[warp][lane] = p;
    __syncthreads();
    float u = 0.0f;  // (S^T k)_j on the undecayed state
#pragma unroll
    for (int w = 0; w < kWarps; ++w) u += part_u[w][lane];
    const float v = has_col ? a.v[t * a.v_stride + h * a.dv + j] : 0.0f;
    const float delta = beta * (v - decay * u);
    p = 0.0f;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int i = warp + kWarps * r;
      s[r] = decay * s[r] + k_sh[i] * delta;
      p += q_sh[i] * s[r];
    }
    part_o[warp][lane] = p;
    __syncthreads();
    if (warp == 0 && has_col) {
      float o = 0.0f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) o += part_o[w][lane];
      a.out[t * a.out_stride + h * a.dv + j] = o;
    }
    // The next token's k_sh/part_u writes happen after every read of this token's (all before
    // the last barrier), and part_o is next written after the next token's second barrier.
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int i = warp + kWarps * r;
    if (has_col && i < a.dk) S[i * a.dv + j] = s[r];
  }
}

}  // namespace

Status DeltaRuleRecurrent(Device& device, const DeltaRuleArgs& a) {
  constexpr const char* kOp = "DeltaRuleRecurrent";
  CLOVER_TRY(CheckAtLeast(kOp, "hk", a.hk, 1));
  CLOVER_TRY(CheckAtLeast(kOp, "hv", a.hv, 1));
  CLOVER_TRY(CheckAtLeast(kOp, "dk", a.dk, 1));
  CLOVER_TRY(CheckAtMost(kOp, "dk", a.dk, kMaxDk));
  CLOVER_TRY(CheckAtLeast(kOp, "dv", a.dv, 1));
  CLOVER_TRY(CheckAtMost(kOp, "dv", a.dv, kMaxGridYZ * kWarpSize));
  CLOVER_TRY(CheckAtLeast(kOp, "n_rows", a.n_rows, 0));
  CLOVER_TRY(CheckStride(kOp, "qk_stride", a.qk_stride, int64_t{a.hk} * a.dk));
  CLOVER_TRY(CheckStride(kOp, "v_stride", a.v_stride, int64_t{a.hv} * a.dv));
  CLOVER_TRY(CheckStride(kOp, "gate_stride", a.gate_stride, a.hv));
  CLOVER_TRY(CheckStride(kOp, "out_stride", a.out_stride, int64_t{a.hv} * a.dv));
  if (a.n_rows == 0) return Status::Ok();
  const dim3 grid(static_cast<unsigned>(a.hv),
                  static_cast<unsigned>((a.dv + kWarpSize - 1) / kWarpSize));
  const int threads = kWarps * kWarpSize;
  // The smallest register tile that holds dk rows: 64 and 128 are the common head sizes.
  if (a.dk <= kWarps * 8) {
    DeltaRuleKernel<8><<<grid, threads, 0, device.stream()>>>(a);
  } else if (a.dk <= kWarps * 16) {
    DeltaRuleKernel<16><<<grid, threads, 0, device.stream()>>>(a);
  } else {
    DeltaRuleKernel<kMaxDk / kWarps><<<grid, threads, 0, device.stream()>>>(a);
  }
  return LaunchStatus("DeltaRuleKernel");
}

}  // namespace clover::kernels::cuda
