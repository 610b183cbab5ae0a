// Gated full-attention mixer of one layer (architecture.md §3.3).
#pragma once

#include "model/forward_context.h"
#include "model/weights.h"

namespace clover::model {

// Does out[r] = GatedAttention(x[r]) for every row of every group (x normed, [n_rows][hidden]),
// writing each group's K/V rows of `layer` at its positions (PrepareAppend done by the caller).
void AttentionForward(const ForwardContext& fc, int layer, const AttentionWeights& w,
                      const float* x, float* out, ForwardScratch& scratch);

}  // namespace clover::model
