// Tensor table and transforms (architecture.md §2, §4.3-4.4; clover-spec.md §3).
#include "model/tensor_map.h"

#include <cmath>
#include <cstring>
#include <set>

#include "kernels/ref/dequantize.h"

namespace clover::model {
namespace {

using Shape = std::vector<int64_t>;

// How a source tensor becomes its canonical value.
enum class Transform {
  kView,        // zero-copy
  kF32,         // converted to F32 when stored otherwise
  kNormPlusOne, // zero-centred RMSNorm weight: F32, +1
  kNegExp,      // A_log -> -exp(A_log), F32
};

// The v-head permutation HF grouped -> GGUF tiled (architecture.md §4.4.5): canonical head j holds
// HF head (j % hk) * r + j / hk.
struct Retile {
  int64_t first_row = 0;   // rows (or F32 elements) before the per-v-head part
  int64_t unit = 0;        // rows per v-head; 0 = no re-tiling
  bool columns = false;    // permute column blocks of `unit` elements instead of rows
};

struct Slot {
  std::string name;       // source name
  Shape source_shape;     // expected shape in the file
  Shape shape;            // canonical shape
  Transform transform = Transform::kView;
  Retile retile;          // HF only
  TensorView* dst = nullptr;
};

class Mapper {
 public:
  Mapper(const SourceTensors& src, NameScheme scheme, ModelWeights* w)
      : src_(src), scheme_(scheme), w_(w), c_(w->config) {}

  Result<MapReport> Run();

 private:
  bool hf() const { return scheme_ == NameScheme::kHf; }
  const SourceTensor* Find(const std::string& name) const {
    auto it = src_.find(name);
    return it == src_.end() ? nullptr : &it->second;
  }
  // Looks up `name` (kNotFound when missing), checks the shape, marks it consumed.
  Result<const SourceTensor*> Take(const std::string& name, const Shape& shape, const Shape* alt_shape = nullptr);
  Status Fill(const Slot& slot);
  Status MapLayer(int i, LayerWeights& layer);
  Status MapGdn(int i, const std::string& p, GdnWeights& g);
  Status MapExperts(int i, const std::string& p, MoeWeights& m);
  Status MapPreview(int i, const std::string& p, GdnWeights& g, bool* present);
  int64_t SourceHead(int64_t j) const { return (j % c_.hk) * (c_.hv / c_.hk) + j / c_.hk; }
  Result<TensorView> ApplyRetile(const TensorView& in, const Retile& r, const std::string& name);
  Result<std::vector<float>> ToF32(const SourceTensor& t, const std::string& name) const;
  TensorView StoreF32(const std::vector<float>& values, const Shape& shape);

  const SourceTensors& src_;
  NameScheme scheme_;
  ModelWeights* w_;
  ModelConfig& c_;
  std::set<std::string> consumed_;
  std::string prefix_;  // HF trunk prefix: "model.language_model." or "model."
};

Result<const SourceTensor*> Mapper::Take(const std::string& name, const Shape& shape, const Shape* alt_shape) {
  const SourceTensor* t = Find(name);
  if (t == nullptr) return NotFound("tensor '" + name + "' (expected shape " + ShapeToString(shape) + ") is missing");
  if (t->view.shape != shape && (alt_shape == nullptr || t->view.shape != *alt_shape)) {
    return InvalidArgument(t->file + ": tensor '" + name + "': expected shape " + ShapeToString(shape) + ", found " +
                           ShapeToString(t->view.shape));
  }
  consumed_.insert(name);
  return t;
}

Result<std::vector<float>> Mapper::ToF32(const SourceTensor& t, const std::string& name) const {
  std::vector<float> out(static_cast<size_t>(t.view.numel()));
  const int64_t cols = t.view.cols();
  for (int64_t r = 0; r < t.view.rows(); ++r) {
    Status s = kernels::ref::DequantizeRow(t.view.dtype, t.view.bytes() + r * t.view.row_bytes(), cols,
                                           out.data() + r * cols);
    if (!s.ok()) return s.WithContext(t.file + ": tensor '" + name + "'");
  }
  return out;
}

TensorView Mapper::StoreF32(const std::vector<float>& values, const Shape& shape) {
  TensorView v;
  v.dtype = DType::kF32;
  v.shape = shape;
  v.nbytes = values.size() * sizeof(float);
  void* p = w_->storage->Allocate(v.nbytes);
  std::memcpy(p, values.data(), v.nbytes);
  v.data = p;
  return v;
}

Result<TensorView> Mapper::ApplyRetile(const TensorView& in, const Retile& r, const std::string& name) {
  const int64_t hv = c_.hv;
  TensorView out = in;
  void* dst = w_->storage->Allocate(in.nbytes);
  std::memcpy(dst, in.data, in.nbytes);
  auto* d = static_cast<uint8_t*>(dst);
  const uint8_t* s = in.bytes();
  if (r.columns) {
    const std::optional<uint64_t> block = DTypeBytes(in.dtype, static_cast<uint64_t>(r.unit));
    if (!block) {
      return Unimplemented("tensor '" + name + "': cannot re-tile " + std::to_string(r.unit) + "-column blocks of " +
                           DTypeName(in.dtype));
    }
    const uint64_t row_bytes = in.row_bytes();
    for (int64_t row = 0; row < in.rows(); ++row) {
      for (int64_t j = 0; j < hv; ++j) {
        std::memcpy(d + row * row_bytes + j * *block, s + row * row_bytes + SourceHead(j) * *block, *block);
      }
    }
  } else {
    const uint64_t row_bytes = in.shape.size() <= 1 ? DTypeBytes(in.dtype, 1).value_or(0) : in.row_bytes();
    const uint64_t unit_bytes = row_bytes * static_cast<uint64_t>(r.unit);
    const uint64_t base = row_bytes * static_cast<uint64_t>(r.first_row);
    for (int64_t j = 0; j < hv; ++j) {
      std::memcpy(d + base + j * unit_bytes, s + base + SourceHead(j) * unit_bytes, unit_bytes);
    }
  }
  out.data = dst;
  return out;
}

Status Mapper::Fill(const Slot& slot) {
  CLOVER_ASSIGN_OR_RETURN(const SourceTensor* t, Take(slot.name, slot.source_shape));
  const bool retile = hf() && slot.retile.unit > 0;
  if (slot.transform == Transform::kView) {
    TensorView v = t->view;
    v.shape = slot.shape;
    if (retile) {
      CLOVER_ASSIGN_OR_RETURN(v, ApplyRetile(v, slot.retile, slot.name));
    }
    *slot.dst = v;
    return Status::Ok();
  }
  const bool hf_math = hf() && slot.transform != Transform::kF32;
  if (t->view.dtype == DType::kF32 && !retile && !hf_math) {  // already canonical: stay zero-copy
    TensorView v = t->view;
    v.shape = slot.shape;
    *slot.dst = v;
    return Status::Ok();
  }
  CLOVER_ASSIGN_OR_RETURN(std::vector<float> values, ToF32(*t, slot.name));
  if (hf_math) {
    for (float& x : values) {
      // -exp in double, rounded once to float: the GGUF converter (numpy float32 exp) may differ by 1 ulp.
      x = slot.transform == Transform::kNormPlusOne ? x + 1.0f : static_cast<float>(-std::exp(static_cast<double>(x)));
    }
  }
  TensorView v = StoreF32(values, slot.shape);
  if (retile) {
    CLOVER_ASSIGN_OR_RETURN(v, ApplyRetile(v, slot.retile, slot.name));
  }
  *slot.dst = v;
  return Status::Ok();
}

Status Mapper::MapGdn(int i, const std::string& p, GdnWeights& g) {
  const int64_t H = c_.hidden, C = c_.conv_dim(), K = c_.conv_kernel, hv = c_.hv, dv = c_.dv;
  const int64_t v_first = 2 * c_.key_dim();
  std::vector<Slot> slots;
  if (hf()) {
    const std::string a = p + "linear_attn.";
    slots = {
        {a + "in_proj_qkv.weight", {C, H}, {C, H}, Transform::kView, {v_first, dv}, &g.qkv},
        {a + "in_proj_z.weight", {hv * dv, H}, {hv * dv, H}, Transform::kView, {0, dv}, &g.z},
        {a + "in_proj_b.weight", {hv, H}, {hv, H}, Transform::kView, {0, 1}, &g.beta},
        {a + "in_proj_a.weight", {hv, H}, {hv, H}, Transform::kView, {0, 1}, &g.alpha},
        {a + "conv1d.weight", {C, 1, K}, {C, K}, Transform::kF32, {v_first, dv}, &g.conv},
        {a + "dt_bias", {hv}, {hv}, Transform::kF32, {0, 1}, &g.dt_bias},
        {a + "A_log", {hv}, {hv}, Transform::kNegExp, {0, 1}, &g.a},
        {a + "norm.weight", {dv}, {dv}, Transform::kF32, {}, &g.norm},
        {a + "out_proj.weight", {H, hv * dv}, {H, hv * dv}, Transform::kView, {0, dv, true}, &g.out},
    };
  } else {
    slots = {
        {p + "attn_qkv.weight", {C, H}, {C, H}, Transform::kView, {}, &g.qkv},
        {p + "attn_gate.weight", {hv * dv, H}, {hv * dv, H}, Transform::kView, {}, &g.z},
        {p + "ssm_beta.weight", {hv, H}, {hv, H}, Transform::kView, {}, &g.beta},
        {p + "ssm_alpha.weight", {hv, H}, {hv, H}, Transform::kView, {}, &g.alpha},
        {p + "ssm_conv1d.weight", {C, K}, {C, K}, Transform::kF32, {}, &g.conv},
        {p + "ssm_dt.bias", {hv}, {hv}, Transform::kF32, {}, &g.dt_bias},
        {p + "ssm_a", {hv}, {hv}, Transform::kF32, {}, &g.a},
        {p + "ssm_norm.weight", {dv}, {dv}, Transform::kF32, {}, &g.norm},
        {p + "ssm_out.weight", {H, hv * dv}, {H, hv * dv}, Transform::kView, {}, &g.out},
    };
  }
  for (const Slot& s : slots) CLOVER_TRY(Fill(s));
  return Status::Ok();
}

Status Mapper::MapPreview(int i, const std::string& p, GdnWeights& g, bool* present) {
  const int64_t H = c_.hidden, C = c_.conv_dim(), K = c_.conv_kernel, hv = c_.hv, dv = c_.dv;
  const int64_t v_first = 2 * c_.key_dim();
  std::vector<Slot> slots;
  if (hf()) {
    const std::string a = p + "linear_attn.";
    slots = {
        {a + "preview_conv1d.weight", {C, 1, K}, {C, K}, Transform::kF32, {v_first, dv}, &g.conv_bwd},
        {a + "preview_in_proj_b.weight", {hv, H}, {hv, H}, Transform::kView, {0, 1}, &g.beta_bwd},
        {a + "preview_in_proj_a.weight", {hv, H}, {hv, H}, Transform::kView, {0, 1}, &g.alpha_bwd},
        {a + "preview_A_log", {hv}, {hv}, Transform::kNegExp, {0, 1}, &g.a_bwd},
        {a + "preview_dt_bias", {hv}, {hv}, Transform::kF32, {0, 1}, &g.dt_bwd},
        {a + "preview_mix", {hv}, {hv}, Transform::kF32, {0, 1}, &g.mix_bwd},
    };
  } else {
    slots = {
        {p + "ssm_conv1d_bwd.weight", {C, K}, {C, K}, Transform::kF32, {}, &g.conv_bwd},
        {p + "ssm_beta_bwd.weight", {hv, H}, {hv, H}, Transform::kView, {}, &g.beta_bwd},
        {p + "ssm_alpha_bwd.weight", {hv, H}, {hv, H}, Transform::kView, {}, &g.alpha_bwd},
        {p + "ssm_a_bwd", {hv}, {hv}, Transform::kF32, {}, &g.a_bwd},
        {p + "ssm_dt_bwd.bias", {hv}, {hv}, Transform::kF32, {}, &g.dt_bwd},
        {p + "ssm_mix_bwd", {hv}, {hv}, Transform::kF32, {}, &g.mix_bwd},
    };
  }
  int found = 0;
  for (const Slot& s : slots) found += Find(s.name) != nullptr;
  *present = found > 0;
  if (found == 0) return Status::Ok();
  if (found != static_cast<int>(slots.size())) {
    for (const Slot& s : slots) {
      if (Find(s.name) == nullptr) {
        return NotFound("layer " + std::to_string(i) + " has " + std::to_string(found) +
                        " of the 6 preview tensors; tensor '" + s.name + "' (expected shape " +
                        ShapeToString(s.source_shape) + ") is missing");
      }
    }
  }
  for (const Slot& s : slots) CLOVER_TRY(Fill(s));
  return Status::Ok();
}

// Slices expert `e` of a stacked [E, rows, cols] tensor, rows [row0, row0 + n).
TensorView ExpertSlice(const TensorView& stacked, int64_t e, int64_t row0, int64_t n) {
  const int64_t E = stacked.shape[0], rows = stacked.shape[1], cols = stacked.shape[2];
  const uint64_t per_expert = stacked.nbytes / static_cast<uint64_t>(E);
  const uint64_t row_bytes = per_expert / static_cast<uint64_t>(rows);
  TensorView v;
  v.dtype = stacked.dtype;
  v.shape = {n, cols};
  v.data = stacked.bytes() + per_expert * e + row_bytes * row0;
  v.nbytes = row_bytes * n;
  return v;
}

Status Mapper::MapExperts(int i, const std::string& p, MoeWeights& m) {
  const int64_t E = c_.n_experts, H = c_.hidden, F = c_.expert_ffn;
  m.expert_gate.resize(E);
  m.expert_up.resize(E);
  m.expert_down.resize(E);
  const std::string fused = hf() ? p + "mlp.experts.gate_up_proj" : p + "ffn_gate_up_exps.weight";
  const std::string down = hf() ? p + "mlp.experts.down_proj" : p + "ffn_down_exps.weight";
  if (hf() && Find(fused) == nullptr && Find(down) == nullptr) {  // per-expert HF checkpoint
    for (int64_t e = 0; e < E; ++e) {
      const std::string q = p + "mlp.experts." + std::to_string(e) + ".";
      CLOVER_ASSIGN_OR_RETURN(const SourceTensor* g, Take(q + "gate_proj.weight", {F, H}));
      CLOVER_ASSIGN_OR_RETURN(const SourceTensor* u, Take(q + "up_proj.weight", {F, H}));
      CLOVER_ASSIGN_OR_RETURN(const SourceTensor* d, Take(q + "down_proj.weight", {H, F}));
      m.expert_gate[e] = g->view;
      m.expert_up[e] = u->view;
      m.expert_down[e] = d->view;
    }
    return Status::Ok();
  }
  if (Find(fused) != nullptr || hf()) {
    CLOVER_ASSIGN_OR_RETURN(const SourceTensor* gu, Take(fused, {E, 2 * F, H}));
    for (int64_t e = 0; e < E; ++e) {
      m.expert_gate[e] = ExpertSlice(gu->view, e, 0, F);
      m.expert_up[e] = ExpertSlice(gu->view, e, F, F);
    }
  } else {
    CLOVER_ASSIGN_OR_RETURN(const SourceTensor* g, Take(p + "ffn_gate_exps.weight", {E, F, H}));
    CLOVER_ASSIGN_OR_RETURN(const SourceTensor* u, Take(p + "ffn_up_exps.weight", {E, F, H}));
    for (int64_t e = 0; e < E; ++e) {
      m.expert_gate[e] = ExpertSlice(g->view, e, 0, F);
      m.expert_up[e] = ExpertSlice(u->view, e, 0, F);
    }
  }
  CLOVER_ASSIGN_OR_RETURN(const SourceTensor* d, Take(down, {E, H, F}));
  for (int64_t e = 0; e < E; ++e) m.expert_down[e] = ExpertSlice(d->view, e, 0, H);
  return Status::Ok();
}

Status Mapper::MapLayer(int i, LayerWeights& layer) {
  const int64_t H = c_.hidden, E = c_.n_experts, S = c_.shared_ffn, hd = c_.head_dim;
  layer.kind = c_.layer_kinds[i];
  const std::string p = hf() ? prefix_ + "layers." + std::to_string(i) + "." : "blk." + std::to_string(i) + ".";
  if (hf()) {
    CLOVER_TRY(Fill({p + "input_layernorm.weight", {H}, {H}, Transform::kNormPlusOne, {}, &layer.attn_norm}));
    CLOVER_TRY(Fill({p + "post_attention_layernorm.weight", {H}, {H}, Transform::kNormPlusOne, {}, &layer.post_norm}));
  } else {
    CLOVER_TRY(Fill({p + "attn_norm.weight", {H}, {H}, Transform::kNormPlusOne, {}, &layer.attn_norm}));
    CLOVER_TRY(Fill({p + "post_attention_norm.weight", {H}, {H}, Transform::kNormPlusOne, {}, &layer.post_norm}));
  }
  if (layer.kind == LayerKind::kGatedDeltaNet) {
    CLOVER_TRY(MapGdn(i, p, layer.gdn));
  } else {
    AttentionWeights& a = layer.attn;
    const std::string s = hf() ? p + "self_attn." : p;
    const bool h = hf();
    const std::vector<Slot> slots = {
        {s + (h ? "q_proj.weight" : "attn_q.weight"), {c_.q_proj_dim(), H}, {c_.q_proj_dim(), H}, Transform::kView, {}, &a.q},
        {s + (h ? "k_proj.weight" : "attn_k.weight"), {c_.kv_dim(), H}, {c_.kv_dim(), H}, Transform::kView, {}, &a.k},
        {s + (h ? "v_proj.weight" : "attn_v.weight"), {c_.kv_dim(), H}, {c_.kv_dim(), H}, Transform::kView, {}, &a.v},
        {s + (h ? "o_proj.weight" : "attn_output.weight"), {H, c_.n_head * hd}, {H, c_.n_head * hd}, Transform::kView, {}, &a.o},
        {s + (h ? "q_norm.weight" : "attn_q_norm.weight"), {hd}, {hd}, Transform::kNormPlusOne, {}, &a.q_norm},
        {s + (h ? "k_norm.weight" : "attn_k_norm.weight"), {hd}, {hd}, Transform::kNormPlusOne, {}, &a.k_norm},
    };
    for (const Slot& slot : slots) CLOVER_TRY(Fill(slot));
  }
  MoeWeights& m = layer.moe;
  CLOVER_TRY(Fill({p + (hf() ? "mlp.gate.weight" : "ffn_gate_inp.weight"), {E, H}, {E, H}, Transform::kView, {}, &m.router}));
  CLOVER_TRY(MapExperts(i, p, m));
  if (S > 0) {
    const bool h = hf();
    const std::vector<Slot> slots = {
        {p + (h ? "mlp.shared_expert.gate_proj.weight" : "ffn_gate_shexp.weight"), {S, H}, {S, H}, Transform::kView, {}, &m.shared_gate},
        {p + (h ? "mlp.shared_expert.up_proj.weight" : "ffn_up_shexp.weight"), {S, H}, {S, H}, Transform::kView, {}, &m.shared_up},
        {p + (h ? "mlp.shared_expert.down_proj.weight" : "ffn_down_shexp.weight"), {H, S}, {H, S}, Transform::kView, {}, &m.shared_down},
    };
    for (const Slot& slot : slots) CLOVER_TRY(Fill(slot));
    // The shared-expert gate is [1, H]; GGUF writers store it as ne {H} or {H, 1}.
    const std::string gate = p + (h ? "mlp.shared_expert_gate.weight" : "ffn_gate_inp_shexp.weight");
    const Shape alt = {H};
    CLOVER_ASSIGN_OR_RETURN(const SourceTensor* sg, Take(gate, {1, H}, &alt));
    m.shared_router = sg->view;
    m.shared_router.shape = {1, H};
  }
  return Status::Ok();
}

Result<MapReport> Mapper::Run() {
  const int64_t V = c_.vocab_size, H = c_.hidden;
  if (hf()) {
    prefix_ = "model.";
    for (const auto& [name, t] : src_) {
      if (name.rfind("model.language_model.", 0) == 0) {
        prefix_ = "model.language_model.";
        break;
      }
    }
  }
  const std::string embed = hf() ? prefix_ + "embed_tokens.weight" : "token_embd.weight";
  const std::string norm = hf() ? prefix_ + "norm.weight" : "output_norm.weight";
  const std::string head = hf() ? "lm_head.weight" : "output.weight";
  CLOVER_TRY(Fill({embed, {V, H}, {V, H}, Transform::kView, {}, &w_->embed}));
  CLOVER_TRY(Fill({norm, {H}, {H}, Transform::kNormPlusOne, {}, &w_->output_norm}));
  if (c_.tie_embeddings && Find(head) == nullptr) {
    w_->output = w_->embed;
  } else {
    CLOVER_TRY(Fill({head, {V, H}, {V, H}, Transform::kView, {}, &w_->output}));
  }
  w_->layers.assign(static_cast<size_t>(c_.n_layers), LayerWeights{});
  int with_preview = 0;
  for (int i = 0; i < c_.n_layers; ++i) {
    CLOVER_TRY(MapLayer(i, w_->layers[i]));
    if (c_.layer_kinds[i] == LayerKind::kGatedDeltaNet) {
      bool present = false;
      const std::string p = hf() ? prefix_ + "layers." + std::to_string(i) + "." : "blk." + std::to_string(i) + ".";
      CLOVER_TRY(MapPreview(i, p, w_->layers[i].gdn, &present));
      with_preview += present;
    }
  }
  if (with_preview > 0 && with_preview != c_.n_gdn_layers()) {
    return NotFound("preview tensors are present on " + std::to_string(with_preview) + " of " +
                    std::to_string(c_.n_gdn_layers()) + " GDN layers; expected all or none");
  }
  c_.has_preview_tensors = with_preview > 0;

  MapReport report;
  for (const auto& [name, t] : src_) {
    if (consumed_.count(name)) continue;
    if (IsIgnoredTensor(name, scheme_, c_)) {
      report.ignored.push_back(name);
      continue;
    }
    return InvalidArgument(t.file + ": unexpected tensor '" + name + "' (shape " + ShapeToString(t.view.shape) +
                           ") is not part of a " + ModelFamilyName(c_.family) + " model with this config");
  }
  report.mapped = static_cast<int>(consumed_.size());
  return report;
}

}  // namespace

bool IsIgnoredTensor(const std::string& name, NameScheme scheme, const ModelConfig& config) {
  if (scheme == NameScheme::kHf) {
    return name.rfind("mtp.", 0) == 0 || name.rfind("model.visual.", 0) == 0;
  }
  if (name.rfind("blk.", 0) != 0) return false;
  const size_t dot = name.find('.', 4);
  if (dot == std::string::npos || dot == 4) return false;
  int64_t layer = 0;
  for (size_t k = 4; k < dot; ++k) {
    if (name[k] < '0' || name[k] > '9' || layer > 1000000) return false;
    layer = layer * 10 + (name[k] - '0');
  }
  return layer >= config.n_layers && layer < config.n_layers + config.mtp_layers;
}

void ForEachCanonicalTensor(const ModelWeights& w,
                            const std::function<void(const std::string&, const TensorView&)>& fn) {
  auto visit = [&](const std::string& name, const TensorView& v) {
    if (!v.empty()) fn(name, v);
  };
  visit("token_embd", w.embed);
  visit("output_norm", w.output_norm);
  if (w.output.data != w.embed.data) visit("output", w.output);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerWeights& l = w.layers[i];
    const std::string p = "blk." + std::to_string(i) + ".";
    visit(p + "attn_norm", l.attn_norm);
    visit(p + "post_attention_norm", l.post_norm);
    const GdnWeights& g = l.gdn;
    const std::pair<const char*, const TensorView*> gdn[] = {
        {"attn_qkv", &g.qkv},        {"attn_gate", &g.z},         {"ssm_beta", &g.beta},
        {"ssm_alpha", &g.alpha},     {"ssm_conv1d", &g.conv},     {"ssm_dt", &g.dt_bias},
        {"ssm_a", &g.a},             {"ssm_norm", &g.norm},       {"ssm_out", &g.out},
        {"ssm_conv1d_bwd", &g.conv_bwd}, {"ssm_beta_bwd", &g.beta_bwd}, {"ssm_alpha_bwd", &g.alpha_bwd},
        {"ssm_a_bwd", &g.a_bwd},     {"ssm_dt_bwd", &g.dt_bwd},   {"ssm_mix_bwd", &g.mix_bwd},
    };
    for (const auto& [name, v] : gdn) visit(p + name, *v);
    const AttentionWeights& a = l.attn;
    const std::pair<const char*, const TensorView*> attn[] = {
        {"attn_q", &a.q}, {"attn_k", &a.k}, {"attn_v", &a.v}, {"attn_output", &a.o},
        {"attn_q_norm", &a.q_norm}, {"attn_k_norm", &a.k_norm},
    };
    for (const auto& [name, v] : attn) visit(p + name, *v);
    const MoeWeights& m = l.moe;
    visit(p + "ffn_gate_inp", m.router);
    for (size_t e = 0; e < m.expert_gate.size(); ++e) {
      visit(p + "ffn_gate_exps." + std::to_string(e), m.expert_gate[e]);
      visit(p + "ffn_up_exps." + std::to_string(e), m.expert_up[e]);
      visit(p + "ffn_down_exps." + std::to_string(e), m.expert_down[e]);
    }
    visit(p + "ffn_gate_shexp", m.shared_gate);
    visit(p + "ffn_up_shexp", m.shared_up);
    visit(p + "ffn_down_shexp", m.shared_down);
    visit(p + "ffn_gate_inp_shexp", m.shared_router);
  }
}

Result<MapReport> MapTensors(const SourceTensors& tensors, NameScheme scheme, ModelWeights* weights) {
  return Mapper(tensors, scheme, weights).Run();
}

}  // namespace clover::model
