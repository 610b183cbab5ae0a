// Gated delta rule (architecture.md §3.2 steps 7): per-token recurrence and the chunked form.
#pragma once

#include <cstdint>

#include "kernels/kernel_context.h"

namespace clover::kernels {

// Sizes and strides of one delta-rule call over `n_rows` consecutive tokens of one sequence.
// v-head j reads q/k head j % hk (the GGUF tiled order, model/weights.h).
struct DeltaRuleArgs {
  int hk = 0, hv = 0, dk = 0, dv = 0;
  int64_t n_rows = 0;
  const float* q = nullptr;  // [n_rows][hk*dk], l2-normalised and scaled by 1/sqrt(dk)
  const float* k = nullptr;  // [n_rows][hk*dk], l2-normalised
  const float* v = nullptr;  // [n_rows][hv*dv]
  int64_t qk_stride = 0, v_stride = 0;
  const float* g = nullptr;     // [n_rows][hv] log-decay (<= 0)
  const float* beta = nullptr;  // [n_rows][hv]
  int64_t gate_stride = 0;
  float* state = nullptr;  // [hv][dk][dv] f32, updated in place
  float* out = nullptr;    // [n_rows][hv*dv]
  int64_t out_stride = 0;
};

// Token by token: S = e^g S; S += k (beta (v - S^T k))^T; o = S^T q. Threads split v-heads.
void DeltaRuleRecurrent(const KernelContext& ctx, const DeltaRuleArgs& args);
// The same result through chunks of `chunk` tokens (within-chunk triangular solve, decays as
// exp of cumulative-sum differences). Threads split v-heads.
void DeltaRuleChunked(const KernelContext& ctx, const DeltaRuleArgs& args, int chunk = 64);

}  // namespace clover::kernels
