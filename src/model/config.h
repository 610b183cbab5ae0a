// ModelConfig: every hyper-parameter of a qwen35moe / clover_moe model, whatever file it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clover::model {

enum class ModelFamily { kQwen35Moe, kCloverMoe };
// Mixer of one layer: Gated DeltaNet ("linear_attention") or gated full attention.
enum class LayerKind { kGatedDeltaNet, kFullAttention };
enum class PreviewGdn { kCausal, kBidirectional };
enum class BlockAlignment { kAnswer, kAbsolute };

const char* ModelFamilyName(ModelFamily family);  // "qwen35moe" / "clover_moe"
const char* LayerKindName(LayerKind kind);        // "linear_attention" / "full_attention"
const char* PreviewGdnName(PreviewGdn mode);      // "causal" / "bidirectional"

// clover-spec.md §2. Defaults are the spec's; `preview_gdn` is resolved at load time
// (bidirectional iff the preview tensors exist, unless the config says otherwise).
struct DiffusionConfig {
  int block_size = 32;
  bool shift_logits = false;
  BlockAlignment block_alignment = BlockAlignment::kAnswer;
  std::optional<PreviewGdn> preview_gdn;
  float coreset_mass = 0.9f;
  int coreset_min_experts = 16;
  int preview_topk = 0;  // 0 = num_experts_per_tok
};

// architecture.md §1 names in comments. Canonical conventions of the loaded weights are in
// model/weights.h.
struct ModelConfig {
  ModelFamily family = ModelFamily::kQwen35Moe;
  std::string source_arch;  // HF model_type or GGUF general.architecture as found

  int64_t vocab_size = 0;         // vocab_size
  int64_t hidden = 0;             // hidden_size
  int n_layers = 0;               // num_hidden_layers (trunk only, MTP excluded)
  std::vector<LayerKind> layer_kinds;
  int full_attention_interval = 4;
  float rms_eps = 1e-6f;
  int64_t max_context = 0;        // max_position_embeddings
  bool tie_embeddings = false;
  int mtp_layers = 0;             // mtp_num_hidden_layers / nextn_predict_layers

  // Gated attention.
  int n_head = 0;                 // num_attention_heads
  int n_head_kv = 0;              // num_key_value_heads
  int head_dim = 0;               // head_dim
  int rope_dim = 0;               // head_dim * partial_rotary_factor
  double rope_theta = 1e7;
  std::vector<int> rope_sections; // mrope_section (informational for text)

  // Gated DeltaNet.
  int hk = 0;                     // linear_num_key_heads
  int hv = 0;                     // linear_num_value_heads
  int dk = 0;                     // linear_key_head_dim
  int dv = 0;                     // linear_value_head_dim
  int conv_kernel = 4;            // linear_conv_kernel_dim

  // MoE.
  int n_experts = 0;              // num_experts
  int top_k = 0;                  // num_experts_per_tok
  int expert_ffn = 0;             // moe_intermediate_size
  int shared_ffn = 0;             // shared_expert_intermediate_size (0 = no shared expert)
  int n_shared_experts = 0;       // 1 when shared_ffn > 0

  // Tokens.
  std::optional<int64_t> mask_token_id;
  std::optional<int64_t> bos_token_id;
  std::optional<int64_t> pad_token_id;
  std::vector<int64_t> eos_token_ids;

  // Sampling defaults of generation_config.json (HF semantics: do_sample false = greedy).
  struct GenerationDefaults {
    bool do_sample = true;
    float temperature = 1.0f;
    float top_p = 1.0f;
    int top_k = 0;
  } generation;

  // Clover only.
  DiffusionConfig diffusion;
  bool has_preview_tensors = false;

  int64_t key_dim() const { return int64_t{hk} * dk; }
  int64_t value_dim() const { return int64_t{hv} * dv; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  int64_t q_proj_dim() const { return int64_t{n_head} * head_dim * 2; }
  int64_t kv_dim() const { return int64_t{n_head_kv} * head_dim; }
  int n_attention_layers() const;
  int n_gdn_layers() const;
  int effective_preview_topk() const {
    return diffusion.preview_topk > 0 ? diffusion.preview_topk : top_k;
  }
};

}  // namespace clover::model
