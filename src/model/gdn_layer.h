// Gated DeltaNet mixer of one layer (architecture.md §3.2).
#pragma once

#include "kernels/delta_rule.h"
#include "model/forward_context.h"
#include "model/weights.h"

namespace clover::model {

// Does out[r] = GDN(x[r]) for every row of every group (x = the normed layer input,
// [n_rows][hidden]), advancing each group's conv and recurrent state of `layer`. In a preview
// group (GroupRows::preview()) the scans start from copies of the committed states and nothing is written
// back; with fc.preview_bidirectional the backward scan (model/preview_gdn.h) is mixed in.
void GdnForward(const ForwardContext& fc, int layer, const GdnWeights& w, const float* x,
                float* out, ForwardScratch& scratch);

// One group's causal conv + SiLU (from and updating `conv_state`), per-head L2 norms of q (times
// 1/sqrt(dk)) and k, and forward delta rule (from and updating `recurrent`) over `rows` rows:
// pre-conv rows `mixed` and gates `beta` / log-decay `g` with the given strides (floats). Writes
// the normed q/k/v rows to `qkv` ([rows][conv_dim]) and the core output to `core`
// ([rows][value_dim]).
void GdnScanRows(const ForwardContext& fc, const GdnWeights& w, int64_t rows, const float* mixed,
                 int64_t mixed_stride, const float* beta, const float* g, int64_t gate_stride,
                 float* conv_state, float* recurrent, float* qkv, float* core);

// The delta-rule call over `rows` rows of normed q/k/v (`qkv`, [rows][conv_dim]) and gates
// `g` / `beta` (`gate_stride` floats apart), updating `state` and writing `out`
// ([rows][value_dim]).
kernels::DeltaRuleArgs GdnDeltaRuleArgs(const ModelConfig& cfg, int64_t rows, const float* qkv,
                                        const float* g, const float* beta, int64_t gate_stride,
                                        float* state, float* out);

}  // namespace clover::model
