// HF config.json / generation_config.json / GGUF metadata -> ModelConfig.
#include "model/config_loader.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

namespace clover::model {
namespace {

using json = nlohmann::json;

const char* JsonTypeName(const json& v) {
  if (v.is_number_integer()) return "integer";
  return v.type_name();
}

// Reads typed fields of one JSON object; errors name the file and the dotted field path.
class Fields {
 public:
  Fields(const json& obj, std::string file, std::string prefix)
      : obj_(obj), file_(std::move(file)), prefix_(std::move(prefix)) {}

  bool Has(const std::string& key) const { return obj_.is_object() && obj_.contains(key) && !obj_[key].is_null(); }
  const json& Raw(const std::string& key) const { return obj_[key]; }
  std::string Where(const std::string& key) const { return file_ + ": field '" + prefix_ + key + "'"; }

  Status Missing(const std::string& key) const { return NotFound(Where(key) + " is required but missing"); }
  Status Mistyped(const std::string& key, const char* expected) const {
    return InvalidArgument(Where(key) + ": expected " + expected + ", found " + JsonTypeName(obj_[key]) + " " +
                           obj_[key].dump());
  }

  // Each getter leaves `*out` unchanged when the field is absent and `required` is false.
  template <typename T>
  Status Int(const std::string& key, T* out, bool required = true) const {
    if (!Has(key)) return required ? Missing(key) : Status::Ok();
    const json& v = obj_[key];
    if (!v.is_number_integer()) return Mistyped(key, "integer");
    const int64_t x = v.get<int64_t>();
    if (x < 0 || x > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      return InvalidArgument(Where(key) + ": value " + std::to_string(x) + " is out of range");
    }
    *out = static_cast<T>(x);
    return Status::Ok();
  }
  template <typename T>
  Status Float(const std::string& key, T* out, bool required = true) const {
    if (!Has(key)) return required ? Missing(key) : Status::Ok();
    if (!obj_[key].is_number()) return Mistyped(key, "number");
    *out = static_cast<T>(obj_[key].get<double>());
    return Status::Ok();
  }
  Status Bool(const std::string& key, bool* out) const {
    if (!Has(key)) return Status::Ok();
    if (!obj_[key].is_boolean()) return Mistyped(key, "boolean");
    *out = obj_[key].get<bool>();
    return Status::Ok();
  }
  Status String(const std::string& key, std::string* out, bool required = true) const {
    if (!Has(key)) return required ? Missing(key) : Status::Ok();
    if (!obj_[key].is_string()) return Mistyped(key, "string");
    *out = obj_[key].get<std::string>();
    return Status::Ok();
  }
  // An int or a list of ints (e.g. eos_token_id).
  Status IntList(const std::string& key, std::vector<int64_t>* out) const {
    if (!Has(key)) return Status::Ok();
    const json& v = obj_[key];
    out->clear();
    if (v.is_number_integer()) {
      out->push_back(v.get<int64_t>());
      return Status::Ok();
    }
    if (!v.is_array()) return Mistyped(key, "integer or list of integers");
    for (const json& x : v) {
      if (!x.is_number_integer()) return Mistyped(key, "integer or list of integers");
      out->push_back(x.get<int64_t>());
    }
    return Status::Ok();
  }
  Status OptionalId(const std::string& key, std::optional<int64_t>* out) const {
    if (!Has(key)) return Status::Ok();
    if (!obj_[key].is_number_integer()) return Mistyped(key, "integer");
    *out = obj_[key].get<int64_t>();
    return Status::Ok();
  }

 private:
  const json& obj_;
  std::string file_;
  std::string prefix_;
};

Result<json> ReadJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::exception& e) {
    return InvalidArgument(path + ": malformed JSON: " + e.what());
  }
}

Status ParseBlockAlignment(const std::string& s, const std::string& where, BlockAlignment* out) {
  if (s == "answer") *out = BlockAlignment::kAnswer;
  else if (s == "absolute") *out = BlockAlignment::kAbsolute;
  else return InvalidArgument(where + ": expected \"answer\" or \"absolute\", found \"" + s + "\"");
  return Status::Ok();
}

Status ParsePreviewGdn(const std::string& s, const std::string& where, std::optional<PreviewGdn>* out) {
  if (s == "bidirectional") *out = PreviewGdn::kBidirectional;
  else if (s == "causal") *out = PreviewGdn::kCausal;
  else return InvalidArgument(where + ": expected \"bidirectional\" or \"causal\", found \"" + s + "\"");
  return Status::Ok();
}

Status ReadDiffusion(const Fields& f, DiffusionConfig* d) {
  CLOVER_TRY(f.Int("block_size", &d->block_size, false));
  CLOVER_TRY(f.Bool("shift_logits", &d->shift_logits));
  std::string s;
  CLOVER_TRY(f.String("block_alignment", &s, false));
  if (!s.empty()) CLOVER_TRY(ParseBlockAlignment(s, f.Where("block_alignment"), &d->block_alignment));
  s.clear();
  CLOVER_TRY(f.String("preview_gdn", &s, false));
  if (!s.empty()) CLOVER_TRY(ParsePreviewGdn(s, f.Where("preview_gdn"), &d->preview_gdn));
  CLOVER_TRY(f.Float("coreset_mass", &d->coreset_mass, false));
  CLOVER_TRY(f.Int("coreset_min_experts", &d->coreset_min_experts, false));
  CLOVER_TRY(f.Int("preview_topk", &d->preview_topk, false));
  return Status::Ok();
}

// Far above any real model; keeps a corrupt layer count from allocating per-layer tables.
constexpr int kMaxLayers = 4096;

Status CheckLayerCount(const ModelConfig& c, const std::string& source) {
  if (c.n_layers <= 0 || c.n_layers > kMaxLayers) {
    return InvalidArgument(source + ": number of layers " + std::to_string(c.n_layers) + " must be in [1, " +
                           std::to_string(kMaxLayers) + "]");
  }
  return Status::Ok();
}

void DeriveLayerKinds(ModelConfig* c) {
  c->layer_kinds.clear();
  for (int i = 0; i < c->n_layers; ++i) {
    const bool full = c->full_attention_interval > 0 && (i + 1) % c->full_attention_interval == 0;
    c->layer_kinds.push_back(full ? LayerKind::kFullAttention : LayerKind::kGatedDeltaNet);
  }
}

void Warn(const std::string& message) { std::fprintf(stderr, "clover: warning: %s\n", message.c_str()); }

}  // namespace

Result<ModelConfig> LoadHfConfig(const std::string& path) {
  CLOVER_ASSIGN_OR_RETURN(json root, ReadJson(path));
  if (!root.is_object()) return InvalidArgument(path + ": expected a JSON object");
  Fields top(root, path, "");
  ModelConfig c;
  CLOVER_TRY(top.String("model_type", &c.source_arch));
  const bool nested = root.contains("text_config");
  if (c.source_arch == "qwen3_5_moe") {
    if (!nested) return NotFound(path + ": field 'text_config' is required for model_type qwen3_5_moe but missing");
    c.family = ModelFamily::kQwen35Moe;
  } else if (c.source_arch == "qwen3_5_moe_text") {
    c.family = ModelFamily::kQwen35Moe;
  } else if (c.source_arch == "clover_moe") {
    c.family = ModelFamily::kCloverMoe;
  } else {
    return Unimplemented(path + ": field 'model_type': expected qwen3_5_moe, qwen3_5_moe_text or clover_moe, found \"" +
                         c.source_arch + "\"");
  }
  if (nested && !root["text_config"].is_object()) return top.Mistyped("text_config", "object");
  const json& text_obj = nested ? root["text_config"] : root;
  Fields t(text_obj, path, nested ? "text_config." : "");

  CLOVER_TRY(t.Int("vocab_size", &c.vocab_size));
  CLOVER_TRY(t.Int("hidden_size", &c.hidden));
  CLOVER_TRY(t.Int("num_hidden_layers", &c.n_layers));
  CLOVER_TRY(t.Int("num_attention_heads", &c.n_head));
  CLOVER_TRY(t.Int("num_key_value_heads", &c.n_head_kv));
  CLOVER_TRY(t.Int("head_dim", &c.head_dim));
  CLOVER_TRY(t.Int("linear_num_key_heads", &c.hk));
  CLOVER_TRY(t.Int("linear_num_value_heads", &c.hv));
  CLOVER_TRY(t.Int("linear_key_head_dim", &c.dk));
  CLOVER_TRY(t.Int("linear_value_head_dim", &c.dv));
  CLOVER_TRY(t.Int("linear_conv_kernel_dim", &c.conv_kernel, false));
  CLOVER_TRY(t.Int("num_experts", &c.n_experts));
  CLOVER_TRY(t.Int("num_experts_per_tok", &c.top_k));
  CLOVER_TRY(t.Int("moe_intermediate_size", &c.expert_ffn));
  CLOVER_TRY(t.Int("shared_expert_intermediate_size", &c.shared_ffn, false));
  c.n_shared_experts = c.shared_ffn > 0 ? 1 : 0;
  CLOVER_TRY(t.Float("rms_norm_eps", &c.rms_eps, false));
  CLOVER_TRY(t.Int("max_position_embeddings", &c.max_context));
  CLOVER_TRY(t.Int("full_attention_interval", &c.full_attention_interval, false));
  CLOVER_TRY(t.Int("mtp_num_hidden_layers", &c.mtp_layers, false));
  // tie_word_embeddings may sit at either level; the text level wins.
  CLOVER_TRY(top.Bool("tie_word_embeddings", &c.tie_embeddings));
  CLOVER_TRY(t.Bool("tie_word_embeddings", &c.tie_embeddings));

  CLOVER_TRY(CheckLayerCount(c, path));
  DeriveLayerKinds(&c);
  if (t.Has("layer_types")) {
    const json& lt = t.Raw("layer_types");
    if (!lt.is_array()) return t.Mistyped("layer_types", "list of strings");
    if (lt.size() != static_cast<size_t>(c.n_layers)) {
      return InvalidArgument(t.Where("layer_types") + ": expected " + std::to_string(c.n_layers) +
                             " entries (num_hidden_layers), found " + std::to_string(lt.size()));
    }
    for (size_t i = 0; i < lt.size(); ++i) {
      const std::string kind = lt[i].is_string() ? lt[i].get<std::string>() : lt[i].dump();
      if (kind == "linear_attention") c.layer_kinds[i] = LayerKind::kGatedDeltaNet;
      else if (kind == "full_attention") c.layer_kinds[i] = LayerKind::kFullAttention;
      else return InvalidArgument(t.Where("layer_types") + "[" + std::to_string(i) +
                                  "]: expected \"linear_attention\" or \"full_attention\", found " + kind);
    }
  }

  // RoPE: rope_parameters (current) or rope_theta / partial_rotary_factor / rope_scaling (older).
  double partial = 0.25;
  CLOVER_TRY(t.Float("partial_rotary_factor", &partial, false));
  CLOVER_TRY(t.Float("rope_theta", &c.rope_theta, false));
  const char* rope_key = t.Has("rope_parameters") ? "rope_parameters" : (t.Has("rope_scaling") ? "rope_scaling" : nullptr);
  if (rope_key != nullptr) {
    if (!t.Raw(rope_key).is_object()) return t.Mistyped(rope_key, "object");
    Fields r(t.Raw(rope_key), path, (nested ? "text_config." : "") + std::string(rope_key) + ".");
    CLOVER_TRY(r.Float("rope_theta", &c.rope_theta, false));
    CLOVER_TRY(r.Float("partial_rotary_factor", &partial, false));
    std::vector<int64_t> sections;
    CLOVER_TRY(r.IntList("mrope_section", &sections));
    c.rope_sections.assign(sections.begin(), sections.end());
  }
  c.rope_dim = static_cast<int>(std::lround(c.head_dim * partial));

  // Token ids: text level first, then top level.
  for (const Fields* f : {&top, &t}) {
    CLOVER_TRY(f->OptionalId("bos_token_id", &c.bos_token_id));
    CLOVER_TRY(f->OptionalId("pad_token_id", &c.pad_token_id));
    CLOVER_TRY(f->IntList("eos_token_id", &c.eos_token_ids));
    CLOVER_TRY(f->OptionalId("mask_token_id", &c.mask_token_id));
  }
  if (c.family == ModelFamily::kCloverMoe) {
    for (const Fields* f : {&top, &t}) {
      if (!f->Has("diffusion")) continue;
      if (!f->Raw("diffusion").is_object()) return f->Mistyped("diffusion", "object");
      Fields d(f->Raw("diffusion"), path, (f == &t && nested ? "text_config." : "") + std::string("diffusion."));
      CLOVER_TRY(ReadDiffusion(d, &c.diffusion));
    }
  }
  CLOVER_TRY(ValidateConfig(c, path));
  return c;
}

Status ApplyGenerationConfig(const std::string& path, ModelConfig* config) {
  CLOVER_ASSIGN_OR_RETURN(json root, ReadJson(path));
  if (!root.is_object()) return InvalidArgument(path + ": expected a JSON object");
  Fields f(root, path, "");
  CLOVER_TRY(f.IntList("eos_token_id", &config->eos_token_ids));
  CLOVER_TRY(f.OptionalId("bos_token_id", &config->bos_token_id));
  CLOVER_TRY(f.OptionalId("pad_token_id", &config->pad_token_id));
  ModelConfig::GenerationDefaults& g = config->generation;
  CLOVER_TRY(f.Bool("do_sample", &g.do_sample));
  CLOVER_TRY(f.Float("temperature", &g.temperature, false));
  CLOVER_TRY(f.Float("top_p", &g.top_p, false));
  CLOVER_TRY(f.Int("top_k", &g.top_k, false));
  if (!(g.temperature >= 0.0f) || !(g.top_p > 0.0f && g.top_p <= 1.0f))
    return InvalidArgument(path + ": temperature must be >= 0 and top_p in (0, 1], found " +
                           std::to_string(g.temperature) + " and " + std::to_string(g.top_p));
  return Status::Ok();
}

Result<ModelConfig> ConfigFromGguf(const io::GgufFile& g) {
  ModelConfig c;
  CLOVER_ASSIGN_OR_RETURN(c.source_arch, g.GetString("general.architecture"));
  if (c.source_arch == "qwen35moe") {
    c.family = ModelFamily::kQwen35Moe;
  } else if (c.source_arch == "clover_moe") {
    c.family = ModelFamily::kCloverMoe;
  } else {
    return Unimplemented(g.label() + ": general.architecture: expected qwen35moe or clover_moe, found \"" +
                         c.source_arch + "\"");
  }
  const std::string p = c.source_arch + ".";
  // Integer hparams are sizes and counts: non-negative and within the field's type.
  auto store = [&](const std::string& key, int64_t v, auto* out) -> Status {
    using T = std::remove_pointer_t<decltype(out)>;
    if (v < 0 || v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      return InvalidArgument(g.label() + ": metadata '" + key + "' = " + std::to_string(v) + " is out of range");
    }
    *out = static_cast<T>(v);
    return Status::Ok();
  };
  auto get_int = [&](const std::string& key, auto* out) -> Status {
    CLOVER_ASSIGN_OR_RETURN(int64_t v, g.GetInt(p + key));
    return store(p + key, v, out);
  };
  auto opt_int = [&](const std::string& key, auto* out) -> Status {
    if (g.Find(key) == nullptr) return Status::Ok();
    CLOVER_ASSIGN_OR_RETURN(int64_t v, g.GetInt(key));
    return store(key, v, out);
  };
  auto opt_id = [&](const std::string& key, std::optional<int64_t>* out) -> Status {
    if (g.Find(key) == nullptr) return Status::Ok();
    CLOVER_ASSIGN_OR_RETURN(*out, g.GetInt(key));
    return Status::Ok();
  };

  int block_count = 0;
  CLOVER_TRY(get_int("block_count", &block_count));
  CLOVER_TRY(opt_int(p + "nextn_predict_layers", &c.mtp_layers));
  if (c.mtp_layers < 0 || c.mtp_layers >= block_count) {
    return InvalidArgument(g.label() + ": " + p + "nextn_predict_layers = " + std::to_string(c.mtp_layers) +
                           " must be below block_count = " + std::to_string(block_count));
  }
  c.n_layers = block_count - c.mtp_layers;
  CLOVER_TRY(get_int("context_length", &c.max_context));
  CLOVER_TRY(get_int("embedding_length", &c.hidden));
  CLOVER_TRY(get_int("attention.head_count", &c.n_head));
  CLOVER_TRY(get_int("attention.head_count_kv", &c.n_head_kv));
  CLOVER_TRY(get_int("attention.key_length", &c.head_dim));
  int value_length = c.head_dim;
  CLOVER_TRY(opt_int(p + "attention.value_length", &value_length));
  if (value_length != c.head_dim) {
    return Unimplemented(g.label() + ": " + p + "attention.value_length " + std::to_string(value_length) +
                         " differs from key_length " + std::to_string(c.head_dim));
  }
  CLOVER_ASSIGN_OR_RETURN(double eps, g.GetFloat(p + "attention.layer_norm_rms_epsilon"));
  c.rms_eps = static_cast<float>(eps);
  CLOVER_ASSIGN_OR_RETURN(c.rope_theta, g.GetFloat(p + "rope.freq_base"));
  CLOVER_TRY(get_int("rope.dimension_count", &c.rope_dim));
  if (g.Find(p + "rope.dimension_sections") != nullptr) {
    CLOVER_ASSIGN_OR_RETURN(std::vector<int64_t> s, g.GetIntArray(p + "rope.dimension_sections"));
    while (!s.empty() && s.back() == 0) s.pop_back();  // the converter pads to 4 with zeros
    c.rope_sections.assign(s.begin(), s.end());
  }
  CLOVER_TRY(get_int("expert_count", &c.n_experts));
  CLOVER_TRY(get_int("expert_used_count", &c.top_k));
  CLOVER_TRY(get_int("expert_feed_forward_length", &c.expert_ffn));
  CLOVER_TRY(opt_int(p + "expert_shared_feed_forward_length", &c.shared_ffn));
  if (g.Find(p + "expert_shared_count") != nullptr) {
    CLOVER_TRY(get_int("expert_shared_count", &c.n_shared_experts));
  } else if (c.shared_ffn > 0) {
    // llama.cpp's qwen35moe never writes the key; some clover_moe files lack it (clover-spec.md §1).
    c.n_shared_experts = 1;
    if (c.family == ModelFamily::kCloverMoe) Warn(g.label() + ": " + p + "expert_shared_count is missing; assuming 1 shared expert "
         "(expert_shared_feed_forward_length = " + std::to_string(c.shared_ffn) + ")");
  }
  CLOVER_TRY(get_int("ssm.conv_kernel", &c.conv_kernel));
  CLOVER_TRY(get_int("ssm.state_size", &c.dk));
  CLOVER_TRY(get_int("ssm.group_count", &c.hk));
  CLOVER_TRY(get_int("ssm.time_step_rank", &c.hv));
  int64_t inner = 0;
  CLOVER_TRY(get_int("ssm.inner_size", &inner));
  if (c.hv <= 0 || inner % c.hv != 0) {
    return InvalidArgument(g.label() + ": " + p + "ssm.inner_size " + std::to_string(inner) +
                           " is not a multiple of ssm.time_step_rank " + std::to_string(c.hv));
  }
  c.dv = static_cast<int>(inner / c.hv);
  CLOVER_TRY(opt_int(p + "full_attention_interval", &c.full_attention_interval));

  if (g.Find(p + "vocab_size") != nullptr) {
    CLOVER_TRY(get_int("vocab_size", &c.vocab_size));
  } else if (const io::GgufValue* tokens = g.Find("tokenizer.ggml.tokens"); tokens && tokens->type == io::GgufType::kArray) {
    c.vocab_size = static_cast<int64_t>(tokens->array().size());
  } else if (const io::GgufTensor* embd = g.FindTensor("token_embd.weight"); embd && embd->view.shape.size() == 2) {
    c.vocab_size = embd->view.shape[0];
  } else {
    return NotFound(g.label() + ": cannot tell the vocabulary size (" + p + "vocab_size, tokenizer.ggml.tokens and "
                    "token_embd.weight are all missing)");
  }
  c.tie_embeddings = g.FindTensor("output.weight") == nullptr;

  CLOVER_TRY(CheckLayerCount(c, g.label()));
  DeriveLayerKinds(&c);
  if (g.Find(p + "attention.recurrent_layers") != nullptr) {
    CLOVER_ASSIGN_OR_RETURN(std::vector<int64_t> rec, g.GetIntArray(p + "attention.recurrent_layers"));
    if (rec.size() < static_cast<size_t>(c.n_layers)) {
      return InvalidArgument(g.label() + ": " + p + "attention.recurrent_layers has " + std::to_string(rec.size()) +
                             " entries, expected at least " + std::to_string(c.n_layers));
    }
    for (int i = 0; i < c.n_layers; ++i) {
      c.layer_kinds[i] = rec[i] ? LayerKind::kGatedDeltaNet : LayerKind::kFullAttention;
    }
  }

  CLOVER_TRY(opt_id("tokenizer.ggml.bos_token_id", &c.bos_token_id));
  CLOVER_TRY(opt_id("tokenizer.ggml.padding_token_id", &c.pad_token_id));
  std::optional<int64_t> eos;
  CLOVER_TRY(opt_id("tokenizer.ggml.eos_token_id", &eos));
  if (eos) c.eos_token_ids = {*eos};
  CLOVER_TRY(opt_id("tokenizer.ggml.mask_token_id", &c.mask_token_id));
  CLOVER_TRY(opt_id(p + "mask_token_id", &c.mask_token_id));

  if (c.family == ModelFamily::kCloverMoe) {
    DiffusionConfig& d = c.diffusion;
    const std::string dp = p + "diffusion.";
    CLOVER_TRY(opt_int(dp + "block_size", &d.block_size));
    for (const std::string& key : {std::string("diffusion.shift_logits"), dp + "shift_logits"}) {
      if (g.Find(key) != nullptr) {
        CLOVER_ASSIGN_OR_RETURN(d.shift_logits, g.GetBool(key));
      }
    }
    if (g.Find(dp + "block_alignment") != nullptr) {
      CLOVER_ASSIGN_OR_RETURN(std::string s, g.GetString(dp + "block_alignment"));
      CLOVER_TRY(ParseBlockAlignment(s, g.label() + ": " + dp + "block_alignment", &d.block_alignment));
    }
    if (g.Find(dp + "preview_gdn") != nullptr) {
      CLOVER_ASSIGN_OR_RETURN(std::string s, g.GetString(dp + "preview_gdn"));
      CLOVER_TRY(ParsePreviewGdn(s, g.label() + ": " + dp + "preview_gdn", &d.preview_gdn));
    }
    if (g.Find(dp + "coreset_mass") != nullptr) {
      CLOVER_ASSIGN_OR_RETURN(double mass, g.GetFloat(dp + "coreset_mass"));
      d.coreset_mass = static_cast<float>(mass);
    }
    CLOVER_TRY(opt_int(dp + "coreset_min_experts", &d.coreset_min_experts));
    CLOVER_TRY(opt_int(dp + "preview_topk", &d.preview_topk));
  }
  CLOVER_TRY(ValidateConfig(c, g.label()));
  return c;
}

Status ValidateConfig(const ModelConfig& c, const std::string& source) {
  auto positive = [&](const char* name, int64_t v) -> Status {
    if (v <= 0) return InvalidArgument(source + ": " + name + " must be > 0, found " + std::to_string(v));
    return Status::Ok();
  };
  CLOVER_TRY(positive("vocab_size", c.vocab_size));
  CLOVER_TRY(positive("hidden_size", c.hidden));
  CLOVER_TRY(positive("num_hidden_layers", c.n_layers));
  CLOVER_TRY(positive("num_experts", c.n_experts));
  CLOVER_TRY(positive("num_experts_per_tok", c.top_k));
  CLOVER_TRY(positive("moe_intermediate_size", c.expert_ffn));
  CLOVER_TRY(positive("linear_conv_kernel_dim", c.conv_kernel));
  if (c.top_k > c.n_experts) {
    return InvalidArgument(source + ": num_experts_per_tok " + std::to_string(c.top_k) + " exceeds num_experts " +
                           std::to_string(c.n_experts));
  }
  if (c.n_attention_layers() > 0) {
    CLOVER_TRY(positive("num_attention_heads", c.n_head));
    CLOVER_TRY(positive("num_key_value_heads", c.n_head_kv));
    CLOVER_TRY(positive("head_dim", c.head_dim));
    if (c.n_head % c.n_head_kv != 0) {
      return InvalidArgument(source + ": num_attention_heads " + std::to_string(c.n_head) +
                             " is not a multiple of num_key_value_heads " + std::to_string(c.n_head_kv));
    }
    if (c.rope_dim < 0 || c.rope_dim > c.head_dim || c.rope_dim % 2 != 0) {
      return InvalidArgument(source + ": rotary dimension " + std::to_string(c.rope_dim) +
                             " must be even and at most head_dim " + std::to_string(c.head_dim));
    }
  }
  if (c.n_gdn_layers() > 0) {
    CLOVER_TRY(positive("linear_num_key_heads", c.hk));
    CLOVER_TRY(positive("linear_num_value_heads", c.hv));
    CLOVER_TRY(positive("linear_key_head_dim", c.dk));
    CLOVER_TRY(positive("linear_value_head_dim", c.dv));
    if (c.hv % c.hk != 0) {
      return InvalidArgument(source + ": linear_num_value_heads " + std::to_string(c.hv) +
                             " is not a multiple of linear_num_key_heads " + std::to_string(c.hk));
    }
  }
  if (c.n_shared_experts > 1) {
    return Unimplemented(source + ": " + std::to_string(c.n_shared_experts) + " shared experts, expected 0 or 1");
  }
  return Status::Ok();
}

}  // namespace clover::model
