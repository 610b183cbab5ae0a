// `clover synth -o OUT.gguf`: a random-weight model of any shape, for benchmarks and tests
// without the real checkpoint (model/random_weights.h draws the weights, O(1) activations).
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/gguf_export.h"
#include "model/random_weights.h"

namespace clover::cli {
namespace {

struct SynthOptions {
  std::string out;
  std::string preset = "qwen36-35b-a3b";
  int layers = 0;  // 0: the preset's
  bool clover = false;
  std::string type = "bf16";
  uint64_t seed = 1;
  std::vector<std::string> sets;  // key=value config overrides
};

// A random model drawn part by part (gguf_export.h ModelPartFn), so that memory holds the
// embeddings and a few layers, not the model. Part 0 (embeddings, final norm, head) is
// MakeRandomWeights of the model without layers from `seed`; layer i is the layer of a one-layer
// model of its kind from `seed + 1 + i` (with a one-row vocabulary, whose embeddings are dropped).
// The first layer of each kind is drawn up front and kept until written: every layer of a kind
// has its shapes, which the GGUF header needs before any data.
class PartwiseDraw {
 public:
  PartwiseDraw(const model::ModelConfig& c, uint64_t seed, DType dtype)
      : config_(c), seed_(seed), dtype_(dtype) {
    model::ModelConfig globals = c;
    globals.n_layers = 0;
    globals.layer_kinds.clear();
    globals_ = model::MakeRandomWeights(globals, seed, dtype);
    globals_.config = c;
    layout_ = globals_;
    layout_.storage.reset();  // views only: the parts own the data
    layout_.layers.resize(c.n_layers);
    for (int i = 0; i < c.n_layers; ++i) {
      auto [it, first] = first_of_kind_.emplace(c.layer_kinds[i], i);
      if (first) kept_.emplace(i, DrawLayer(i));
      layout_.layers[i] = kept_.at(it->second).layers[it->second];
    }
  }

  // Names, shapes and dtypes of every tensor (the data of later parts may be freed).
  const model::ModelWeights& layout() const { return layout_; }

  Result<const model::ModelWeights*> Part(int p) {
    if (p == 0) return &globals_;
    globals_ = {};
    const int layer = p - 1;
    std::erase_if(kept_, [layer](const auto& k) { return k.first < layer; });
    if (auto it = kept_.find(layer); it != kept_.end()) return &it->second;
    current_ = DrawLayer(layer);
    return &current_;
  }

 private:
  // Returns weights holding only layer `i` (at index i).
  model::ModelWeights DrawLayer(int i) const {
    model::ModelConfig one = config_;
    one.n_layers = 1;
    one.layer_kinds = {config_.layer_kinds[i]};
    one.vocab_size = 1;
    const model::ModelWeights drawn = model::MakeRandomWeights(one, seed_ + 1 + i, dtype_);
    model::ModelWeights w;
    w.config = config_;
    w.layers.resize(config_.n_layers);
    w.layers[i] = drawn.layers[0];
    w.storage = drawn.storage;
    return w;
  }

  model::ModelConfig config_;
  uint64_t seed_;
  DType dtype_;
  model::ModelWeights globals_;
  model::ModelWeights layout_;
  std::map<model::LayerKind, int> first_of_kind_;
  std::map<int, model::ModelWeights> kept_;  // first layer of each kind, until written
  model::ModelWeights current_;
};

// Applies "key=value" overrides of the integer shape fields.
Status ApplyOverrides(const std::vector<std::string>& sets, model::ModelConfig* c) {
  const std::map<std::string, int64_t*> wide = {
      {"vocab_size", &c->vocab_size}, {"hidden", &c->hidden}, {"max_context", &c->max_context}};
  const std::map<std::string, int*> narrow = {
      {"n_layers", &c->n_layers},
      {"n_head", &c->n_head},
      {"n_head_kv", &c->n_head_kv},
      {"head_dim", &c->head_dim},
      {"rope_dim", &c->rope_dim},
      {"hk", &c->hk},
      {"hv", &c->hv},
      {"dk", &c->dk},
      {"dv", &c->dv},
      {"n_experts", &c->n_experts},
      {"top_k", &c->top_k},
      {"expert_ffn", &c->expert_ffn},
      {"shared_ffn", &c->shared_ffn},
      {"full_attention_interval", &c->full_attention_interval},
  };
  for (const std::string& s : sets) {
    const size_t eq = s.find('=');
    const std::string key = s.substr(0, eq);
    int64_t v = 0;
    try {
      if (eq == std::string::npos) throw std::invalid_argument(s);
      size_t used = 0;
      v = std::stoll(s.substr(eq + 1), &used);
      if (used != s.size() - eq - 1 || v < 0) throw std::invalid_argument(s);
    } catch (const std::exception&) {
      return InvalidArgument("--set: '" + s + "', expected key=non-negative integer");
    }
    if (auto it = wide.find(key); it != wide.end()) {
      *it->second = v;
    } else if (auto it2 = narrow.find(key); it2 != narrow.end()) {
      *it2->second = static_cast<int>(v);
    } else {
      std::string keys;
      for (const auto& [k, p] : wide) keys += " " + k;
      for (const auto& [k, p] : narrow) keys += " " + k;
      return InvalidArgument("--set: unknown key '" + key + "', expected one of" + keys);
    }
  }
  return Status::Ok();
}

// The text tower of Qwen3.6-35B-A3B (architecture.md §1.2): the random models' defaults (RMS
// eps 1e-6, RoPE theta 1e7, conv kernel 4, attention every 4th layer are already its values) with
// its shapes set as `--set` would.
constexpr const char* kQwen36Shapes[] = {
    "vocab_size=248320",
    "hidden=2048",
    "n_layers=40",
    "n_head=16",
    "n_head_kv=2",
    "head_dim=256",
    "rope_dim=64",
    "hk=16",
    "hv=32",
    "dk=128",
    "dv=128",
    "n_experts=256",
    "top_k=8",
    "expert_ffn=512",
    "shared_ffn=512",
    "max_context=262144",
};

Result<model::ModelConfig> PresetConfig(const std::string& name) {
  if (name != "qwen36-35b-a3b") return model::RandomModelConfig(name);
  CLOVER_ASSIGN_OR_RETURN(model::ModelConfig c, model::RandomModelConfig("tiny"));
  CLOVER_TRY(ApplyOverrides({std::begin(kQwen36Shapes), std::end(kQwen36Shapes)}, &c));
  c.source_arch = "synth-" + name;
  c.rope_sections = {11, 11, 10};
  return c;
}

Status RunSynth(const SynthOptions& opts) {
  CLOVER_ASSIGN_OR_RETURN(TypePolicy policy, TypePolicyFromName(opts.type));
  CLOVER_ASSIGN_OR_RETURN(model::ModelConfig c, PresetConfig(opts.preset));
  if (opts.layers > 0) c.n_layers = opts.layers;
  CLOVER_TRY(ApplyOverrides(opts.sets, &c));
  if (c.full_attention_interval <= 0)
    return InvalidArgument("--set: full_attention_interval must be positive");
  c.layer_kinds.clear();
  for (int i = 0; i < c.n_layers; ++i) {
    c.layer_kinds.push_back((i + 1) % c.full_attention_interval == 0
                                ? model::LayerKind::kFullAttention
                                : model::LayerKind::kGatedDeltaNet);
  }
  c.n_shared_experts = c.shared_ffn > 0 ? 1 : 0;
  if (opts.clover) {
    c.family = model::ModelFamily::kCloverMoe;
    c.mask_token_id = c.vocab_size - 1;
    c.has_preview_tensors = true;
  }
  // Matrices are drawn at the precision the output keeps (BF16 under every quantized policy).
  const DType draw = policy == TypePolicy::kF32 ? DType::kF32 : DType::kBF16;
  PartwiseDraw model(c, opts.seed, draw);
  const std::string arch = opts.clover ? "clover_moe" : "qwen35moe";
  return WriteModelGguf(
      model.layout(), [&model](int p) { return model.Part(p); }, policy, arch,
      "synth " + opts.preset + " seed " + std::to_string(opts.seed), opts.out);
}

}  // namespace

void RegisterSynthCommand(CLI::App& app) {
  auto opts = std::make_shared<SynthOptions>();
  CLI::App* cmd = app.add_subcommand(
      "synth", "Write a random-weight model of any shape (weights scaled for O(1) activations)");
  cmd->add_option("-o,--out", opts->out, "output GGUF path")->required();
  cmd->add_option("--preset", opts->preset, "qwen36-35b-a3b | tiny | medium | clover-tiny")
      ->capture_default_str();
  cmd->add_option("--layers", opts->layers, "number of layers (default: the preset's)");
  cmd->add_flag("--clover", opts->clover, "a clover_moe model: mask token and preview tensors");
  cmd->add_option("--type", opts->type, kTypePolicyHelp)->capture_default_str();
  cmd->add_option("--seed", opts->seed, "random seed")->capture_default_str();
  cmd->add_option("--set", opts->sets,
                  "config override key=value (hidden, n_experts, top_k, expert_ffn, ...)");
  cmd->callback([opts] {
    Status s = RunSynth(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
