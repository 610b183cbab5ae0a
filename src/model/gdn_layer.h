// Gated DeltaNet mixer of one layer (architecture.md §3.2).
#pragma once

#include "model/forward_context.h"
#include "model/weights.h"

namespace clover::model {

// Does out[r] = GDN(x[r]) for every row of every group (x = the normed layer input,
// [n_rows][hidden]), advancing each group's conv and recurrent state of `layer`. In a preview
// group (GroupRows::preview()) the scans start from copies of the committed states and nothing is written
// back; with fc.preview_bidirectional the backward scan (model/preview_gdn.h) is mixed in.
void GdnForward(const ForwardContext& fc, int layer, const GdnWeights& w, const float* x,
                float* out, ForwardScratch& scratch);

}  // namespace clover::model
