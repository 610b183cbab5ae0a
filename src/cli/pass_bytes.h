// What one forward pass reads from memory, for comparing `clover bench` timings with the
// bandwidth limit. Header-only so that tests/cli can check it without the `clover` binary.
#pragma once

#include <cstdint>
#include <span>

#include "model/weights.h"

namespace clover::cli {

struct PassBytes {
  uint64_t weights = 0;  // weight bytes the pass reads (each once: rows are batched per matrix)
  uint64_t state = 0;    // sequence-state bytes read and written
  uint64_t total() const { return weights + state; }
};

// Returns the bytes a pass of `rows` tokens after `context` positions moves, given the distinct
// routed experts each layer ran (model::ForwardLogits::distinct_experts) and the number of rows
// whose logits it returns. An append and a causal preview read the same tensors (a preview writes
// its state to scratch copies instead); a bidirectional preview (`bidirectional_preview`) also
// reads the GDN preview tensors.
// Weights: the embedding rows of the tokens; per layer both norms, the mixer (GDN projections,
// conv, gates and norm, or the attention projections and q/k norms), the router, the shared
// expert and its gate, and `distinct_experts[layer]` routed experts (a layer's experts share one
// shape and dtype); the final norm and the head when logits are returned. State: per GDN layer the
// conv and recurrent state, read and written; per attention layer the K and V rows of all `context
// + rows` positions read and the new rows written (F32).
inline PassBytes CountPassBytes(const model::ModelWeights& w, std::span<const int> distinct_experts,
                                int64_t context, int64_t rows, int64_t logit_rows,
                                bool bidirectional_preview = false) {
  const model::ModelConfig& c = w.config;
  PassBytes b;
  auto add = [&b](const TensorView& t) { b.weights += t.nbytes; };
  b.weights += static_cast<uint64_t>(rows) * w.embed.row_bytes();
  for (size_t il = 0; il < w.layers.size(); ++il) {
    const model::LayerWeights& l = w.layers[il];
    add(l.attn_norm);
    add(l.post_norm);
    if (l.kind == model::LayerKind::kGatedDeltaNet) {
      for (const TensorView* t : {&l.gdn.qkv, &l.gdn.z, &l.gdn.beta, &l.gdn.alpha, &l.gdn.conv,
                                  &l.gdn.dt_bias, &l.gdn.a, &l.gdn.norm, &l.gdn.out})
        add(*t);
      if (bidirectional_preview) {
        for (const TensorView* t : {&l.gdn.conv_bwd, &l.gdn.beta_bwd, &l.gdn.alpha_bwd,
                                    &l.gdn.a_bwd, &l.gdn.dt_bwd, &l.gdn.mix_bwd})
          add(*t);
      }
      const uint64_t conv = static_cast<uint64_t>(c.conv_kernel - 1) * c.conv_dim() * sizeof(float);
      const uint64_t recurrent = static_cast<uint64_t>(c.hv) * c.dk * c.dv * sizeof(float);
      b.state += 2 * (conv + recurrent);
    } else {
      for (const TensorView* t :
           {&l.attn.q, &l.attn.k, &l.attn.v, &l.attn.o, &l.attn.q_norm, &l.attn.k_norm})
        add(*t);
      const uint64_t kv_row = 2 * static_cast<uint64_t>(c.kv_dim()) * sizeof(float);
      b.state += static_cast<uint64_t>(context + 2 * rows) * kv_row;
    }
    const model::MoeWeights& m = l.moe;
    for (const TensorView* t :
         {&m.router, &m.shared_gate, &m.shared_up, &m.shared_down, &m.shared_router})
      add(*t);
    if (!m.expert_gate.empty() && il < distinct_experts.size()) {
      const uint64_t expert =
          m.expert_gate[0].nbytes + m.expert_up[0].nbytes + m.expert_down[0].nbytes;
      b.weights += static_cast<uint64_t>(distinct_experts[il]) * expert;
    }
  }
  if (logit_rows > 0) {
    add(w.output_norm);
    add(w.output);
  }
  return b;
}

}  // namespace clover::cli
