// Backward (anti-causal) GDN branch of the Clover preview pass (clover-spec.md §3; golden
// clover-tiny README §3.2 step 2).
#pragma once

#include "model/forward_context.h"
#include "model/weights.h"

namespace clover::model {

// For every preview group of `fc`: anti-causal conv of the pre-conv rows `mixed`
// ([n_rows][conv_dim], tap j reads row i + j, zero past the block) + SiLU; k~ l2-normalised
// (no scale); gates beta~ = sigmoid(W_b~ x), g~ = a_bwd * softplus(W_a~ x + dt_bwd); a scan from
// the block's last row to its first from a zero state, where row i reads the state before its
// own update with the forward query q^ (`q_hat`, rows of conv_dim floats, q channels first).
// Adds sigmoid(mix_bwd[h]) * o<-_i to `core` ([n_rows][value_dim], the forward branch's output).
void GdnPreviewBackward(const ForwardContext& fc, int layer, const GdnWeights& w, const float* x,
                        const float* mixed, const float* q_hat, float* core,
                        ForwardScratch& scratch);

}  // namespace clover::model
