// ModelWeights: the one canonical in-memory layout of a model, whichever file it came from.
//
// Canonical conventions (docs/design.md "Canonical weights"):
//  - matrices are [out, in] views (rows contiguous), any supported dtype, zero-copy where possible;
//  - zero-centred RMSNorm weights have the +1 applied (plain multiply), F32;
//  - GDN `a` is `ssm_a = -exp(A_log)` (F32); `dt_bias`, `conv` (shape [conv_dim, K]) are F32;
//  - GDN value heads are in the GGUF *tiled* order: v-head j uses k-head j % hk
//    (architecture.md §4.4.5); HF files are re-tiled at load;
//  - routed experts are per-expert views (stacked or fused HF/GGUF tensors are sliced, not copied).
#pragma once

#include <memory>
#include <vector>

#include "core/tensor.h"
#include "model/config.h"

namespace clover::model {

struct GdnWeights {
  TensorView qkv;      // [conv_dim, hidden]: q rows, k rows, v rows (v heads tiled)
  TensorView z;        // [value_dim, hidden]
  TensorView beta;     // [hv, hidden]
  TensorView alpha;    // [hv, hidden]
  TensorView conv;     // [conv_dim, conv_kernel] F32; tap conv_kernel-1 multiplies the current row
  TensorView dt_bias;  // [hv] F32
  TensorView a;        // [hv] F32, -exp(A_log)
  TensorView norm;     // [dv] F32, gated RMSNorm weight (no +1)
  TensorView out;      // [hidden, value_dim]
  // Clover preview tensors (clover-spec.md §3); empty views when absent.
  TensorView conv_bwd;   // [conv_dim, conv_kernel] F32; tap j multiplies row i + j
  TensorView beta_bwd;   // [hv, hidden]
  TensorView alpha_bwd;  // [hv, hidden]
  TensorView a_bwd;      // [hv] F32, -exp(preview_A_log)
  TensorView dt_bwd;     // [hv] F32
  TensorView mix_bwd;    // [hv] F32, raw logit (lambda = sigmoid)
};

struct AttentionWeights {
  TensorView q;       // [n_head * head_dim * 2, hidden]: per head [query | gate]
  TensorView k;       // [kv_dim, hidden]
  TensorView v;       // [kv_dim, hidden]
  TensorView o;       // [hidden, n_head * head_dim]
  TensorView q_norm;  // [head_dim] F32 (+1 applied)
  TensorView k_norm;  // [head_dim] F32 (+1 applied)
};

struct MoeWeights {
  TensorView router;                   // [n_experts, hidden]
  std::vector<TensorView> expert_gate; // n_experts x [expert_ffn, hidden]
  std::vector<TensorView> expert_up;   // n_experts x [expert_ffn, hidden]
  std::vector<TensorView> expert_down; // n_experts x [hidden, expert_ffn]
  TensorView shared_gate;              // [shared_ffn, hidden]; empty without a shared expert
  TensorView shared_up;                // [shared_ffn, hidden]
  TensorView shared_down;              // [hidden, shared_ffn]
  TensorView shared_router;            // [1, hidden]: scalar sigmoid gate of the shared expert
};

struct LayerWeights {
  LayerKind kind = LayerKind::kGatedDeltaNet;
  TensorView attn_norm;  // [hidden] F32 (+1 applied)
  TensorView post_norm;  // [hidden] F32 (+1 applied)
  GdnWeights gdn;        // set when kind == kGatedDeltaNet
  AttentionWeights attn; // set when kind == kFullAttention
  MoeWeights moe;
};

// Keeps whatever backs the views alive: mapped files and owned (transformed) buffers.
class WeightStorage {
 public:
  // Returns a zeroed, 64-byte aligned buffer of `nbytes` owned by this storage.
  void* Allocate(uint64_t nbytes);
  // Keeps `holder` (e.g. a mapped file) alive as long as this storage.
  void Retain(std::shared_ptr<const void> holder) { retained_.push_back(std::move(holder)); }

 private:
  std::vector<std::shared_ptr<void>> owned_;
  std::vector<std::shared_ptr<const void>> retained_;
};

struct ModelWeights {
  ModelConfig config;
  TensorView embed;        // [vocab, hidden]
  TensorView output_norm;  // [hidden] F32 (+1 applied)
  TensorView output;       // [vocab, hidden] (== embed when tied)
  std::vector<LayerWeights> layers;
  std::shared_ptr<WeightStorage> storage = std::make_shared<WeightStorage>();
};

}  // namespace clover::model
