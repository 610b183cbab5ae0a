// ValidateWeights: one pass over every tensor the forward reads.
#include "model/model_validation.h"

#include <string>

#include "kernels/kernel_table.h"

namespace clover::model {
namespace {

Status CheckShape(const TensorView& t, const std::vector<int64_t>& want, const std::string& name) {
  if (t.empty())
    return InvalidArgument(name + ": tensor missing, expected shape " + ShapeToString(want));
  if (t.shape != want) {
    return InvalidArgument(name + ": shape " + ShapeToString(t.shape) + ", expected " +
                           ShapeToString(want));
  }
  return Status::Ok();
}

Status CheckMatrix(const TensorView& t, int64_t rows, int64_t cols, const std::string& name) {
  CLOVER_TRY(CheckShape(t, {rows, cols}, name));
  return kernels::CheckMatMulWeight(t, name);
}

Status CheckF32(const TensorView& t, const std::vector<int64_t>& want, const std::string& name) {
  CLOVER_TRY(CheckShape(t, want, name));
  if (t.dtype != DType::kF32) {
    return InvalidArgument(name + ": dtype " + DTypeName(t.dtype) + ", expected F32");
  }
  return Status::Ok();
}

Status CheckMoe(const ModelConfig& c, const MoeWeights& m, const std::string& p) {
  const int64_t h = c.hidden;
  CLOVER_TRY(CheckMatrix(m.router, c.n_experts, h, p + "router"));
  if (static_cast<int>(m.expert_gate.size()) != c.n_experts ||
      static_cast<int>(m.expert_up.size()) != c.n_experts ||
      static_cast<int>(m.expert_down.size()) != c.n_experts) {
    return InvalidArgument(p + "experts: " + std::to_string(m.expert_gate.size()) +
                           " expert views, expected " + std::to_string(c.n_experts));
  }
  for (int e = 0; e < c.n_experts; ++e) {
    const std::string pe = p + "experts." + std::to_string(e) + ".";
    CLOVER_TRY(CheckMatrix(m.expert_gate[e], c.expert_ffn, h, pe + "gate"));
    CLOVER_TRY(CheckMatrix(m.expert_up[e], c.expert_ffn, h, pe + "up"));
    CLOVER_TRY(CheckMatrix(m.expert_down[e], h, c.expert_ffn, pe + "down"));
  }
  if (c.shared_ffn > 0) {
    CLOVER_TRY(CheckMatrix(m.shared_gate, c.shared_ffn, h, p + "shared_gate"));
    CLOVER_TRY(CheckMatrix(m.shared_up, c.shared_ffn, h, p + "shared_up"));
    CLOVER_TRY(CheckMatrix(m.shared_down, h, c.shared_ffn, p + "shared_down"));
    CLOVER_TRY(CheckMatrix(m.shared_router, 1, h, p + "shared_router"));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateWeights(const ModelWeights& w) {
  const ModelConfig& c = w.config;
  if (c.hidden <= 0 || c.vocab_size <= 0 || c.n_layers <= 0 ||
      static_cast<int>(c.layer_kinds.size()) != c.n_layers ||
      static_cast<int>(w.layers.size()) != c.n_layers) {
    return InvalidArgument("model: config has hidden " + std::to_string(c.hidden) + ", vocab " +
                           std::to_string(c.vocab_size) + ", " + std::to_string(c.n_layers) +
                           " layers, " + std::to_string(c.layer_kinds.size()) +
                           " layer kinds and " + std::to_string(w.layers.size()) +
                           " layer weights");
  }
  if (c.n_experts <= 0 || c.top_k <= 0 || c.top_k > c.n_experts) {
    return InvalidArgument("model: top_k " + std::to_string(c.top_k) + " of " +
                           std::to_string(c.n_experts) + " experts");
  }
  if (c.n_gdn_layers() > 0 && (c.hk <= 0 || c.hv % c.hk != 0 || c.conv_kernel < 1)) {
    return InvalidArgument("model: GDN heads hk " + std::to_string(c.hk) + ", hv " +
                           std::to_string(c.hv) + " (hv must be a multiple of hk)");
  }
  if (c.n_attention_layers() > 0 && (c.n_head_kv <= 0 || c.n_head % c.n_head_kv != 0 ||
                                     c.rope_dim % 2 != 0 || c.rope_dim > c.head_dim)) {
    return InvalidArgument(
        "model: attention heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) +
        ", rope_dim " + std::to_string(c.rope_dim) + " of head_dim " + std::to_string(c.head_dim));
  }
  const int64_t h = c.hidden;
  CLOVER_TRY(CheckShape(w.embed, {c.vocab_size, h}, "token_embd"));
  CLOVER_TRY(kernels::WeightTypeOf(w.embed.dtype, "token_embd").status());
  CLOVER_TRY(CheckF32(w.output_norm, {h}, "output_norm"));
  CLOVER_TRY(CheckMatrix(w.output, c.vocab_size, h, "output"));
  for (int i = 0; i < c.n_layers; ++i) {
    const LayerWeights& l = w.layers[i];
    const std::string p = "blk." + std::to_string(i) + ".";
    if (l.kind != c.layer_kinds[i]) {
      return InvalidArgument(p + ": layer kind " + LayerKindName(l.kind) + ", config says " +
                             LayerKindName(c.layer_kinds[i]));
    }
    CLOVER_TRY(CheckF32(l.attn_norm, {h}, p + "attn_norm"));
    CLOVER_TRY(CheckF32(l.post_norm, {h}, p + "post_attention_norm"));
    if (l.kind == LayerKind::kGatedDeltaNet) {
      const GdnWeights& g = l.gdn;
      CLOVER_TRY(CheckMatrix(g.qkv, c.conv_dim(), h, p + "attn_qkv"));
      CLOVER_TRY(CheckMatrix(g.z, c.value_dim(), h, p + "attn_gate"));
      CLOVER_TRY(CheckMatrix(g.beta, c.hv, h, p + "ssm_beta"));
      CLOVER_TRY(CheckMatrix(g.alpha, c.hv, h, p + "ssm_alpha"));
      CLOVER_TRY(CheckF32(g.conv, {c.conv_dim(), c.conv_kernel}, p + "ssm_conv1d"));
      CLOVER_TRY(CheckF32(g.dt_bias, {c.hv}, p + "ssm_dt.bias"));
      CLOVER_TRY(CheckF32(g.a, {c.hv}, p + "ssm_a"));
      CLOVER_TRY(CheckF32(g.norm, {c.dv}, p + "ssm_norm"));
      CLOVER_TRY(CheckMatrix(g.out, h, c.value_dim(), p + "ssm_out"));
    } else {
      const AttentionWeights& a = l.attn;
      CLOVER_TRY(CheckMatrix(a.q, c.q_proj_dim(), h, p + "attn_q"));
      CLOVER_TRY(CheckMatrix(a.k, c.kv_dim(), h, p + "attn_k"));
      CLOVER_TRY(CheckMatrix(a.v, c.kv_dim(), h, p + "attn_v"));
      CLOVER_TRY(CheckMatrix(a.o, h, int64_t{c.n_head} * c.head_dim, p + "attn_output"));
      CLOVER_TRY(CheckF32(a.q_norm, {c.head_dim}, p + "attn_q_norm"));
      CLOVER_TRY(CheckF32(a.k_norm, {c.head_dim}, p + "attn_k_norm"));
    }
    CLOVER_TRY(CheckMoe(c, l.moe, p + "ffn."));
  }
  return Status::Ok();
}

}  // namespace clover::model
