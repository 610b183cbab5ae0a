// GDN pieces of the Clover preview pass: the backward (anti-causal) branch (clover-spec.md §3;
// golden clover-tiny README §3.2 step 2) and a preview group that reuses its cache
// (clover-decoding.md §9.1).
#pragma once

#include "model/forward_context.h"
#include "model/weights.h"

namespace clover::model {

// For every preview group of `fc` without a cache: anti-causal conv of the pre-conv rows `mixed`
// ([n_rows][conv_dim], tap j reads row i + j, zero past the block) + SiLU; k~ l2-normalised
// (no scale); gates beta~ = sigmoid(W_b~ x), g~ = a_bwd * softplus(W_a~ x + dt_bwd); a scan from
// the block's last row to its first from a zero state, where row i reads the state before its
// own update with the forward query q^ (`q_hat`, rows of conv_dim floats, q channels first).
// Adds sigmoid(mix_bwd[h]) * o<-_i to `core` ([n_rows][value_dim], the forward branch's output).
void GdnPreviewBackward(const ForwardContext& fc, int layer, const GdnWeights& w, const float* x,
                        const float* mixed, const float* q_hat, float* core,
                        ForwardScratch& scratch);

// The conv, scans and core output of preview group `g`, which has a cache and whose pass rows are
// the live block rows. Stores the live rows' pre-conv rows `mixed`, gates `beta` and `g_decay`
// ([n_rows][hv]) and, for the backward branch, their backward gates (from the normed input `x`)
// in the cache; then runs the causal conv and forward scan from `conv_state` / `recurrent` (copies
// of the committed states, clobbered) and the backward branch (with fc.preview_bidirectional and
// the layer's tensors) over every block row, the rows that are not live read from the cache.
// Writes the live rows' normed q/k/v to `qkv` ([n_rows][conv_dim]) and their output to `core`
// ([n_rows][value_dim]).
void GdnPreviewReuse(const ForwardContext& fc, int layer, const GdnWeights& w, const GroupRows& g,
                     const float* x, const float* mixed, const float* beta, const float* g_decay,
                     float* conv_state, float* recurrent, float* qkv, float* core,
                     ForwardScratch& scratch);

}  // namespace clover::model
