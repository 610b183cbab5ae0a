// MoE FFN of one layer (architecture.md §3.4): softmax router, top-k renormalised, SwiGLU
// experts, optional gated shared expert.
#pragma once

#include <cstdint>
#include <vector>

#include "model/forward_context.h"
#include "model/weights.h"

namespace clover::model {

// One row's routing: experts (descending probability, ties -> lower id) and their weights.
struct RowRoute {
  std::vector<int> experts;
  std::vector<float> weights;
};

// Returns the top-`k` route of router logits `logits[n_experts]`: softmax in f32 over all
// experts, top-k by probability (ties -> lower id), weights renormalised to sum 1.
RowRoute RouteTopK(const float* logits, int n_experts, int k);

// Does out[r] = MoE(x[r]) for all rows (x normed, [n_rows][hidden]). Rows are grouped by expert so
// each routed expert's weights are read once per call.
void MoeForward(const ForwardContext& fc, int layer, const MoeWeights& w, const float* x,
                float* out, ForwardScratch& scratch);

}  // namespace clover::model
