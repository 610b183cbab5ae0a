// `clover info MODEL`: family, hyper-parameters, tensor statistics and per-sequence memory.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "model/loader.h"
#include "model/tensor_map.h"

namespace clover::cli {
namespace {

using json = nlohmann::json;

struct InfoOptions {
  std::string model;
  int64_t ctx = 4096;
  bool json = false;
};

// The shortest decimal that reads back as the same float (0.9f prints as 0.9, not 0.8999999761...).
json FloatJson(float f) {
  char buf[32];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, f);
    if (std::strtof(buf, nullptr) == f) break;
  }
  return std::strtod(buf, nullptr);
}

json OptionalJson(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

// Every ModelConfig field except where it came from (source_arch), so that the same model read
// from HF and from GGUF reports identical hparams.
json HparamsJson(const model::ModelConfig& c) {
  json kinds = json::array();
  for (model::LayerKind k : c.layer_kinds) kinds.push_back(model::LayerKindName(k));
  json h = {
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden},
      {"num_layers", c.n_layers},
      {"layer_types", kinds},
      {"full_attention_interval", c.full_attention_interval},
      {"rms_norm_eps", FloatJson(c.rms_eps)},
      {"max_context", c.max_context},
      {"tie_embeddings", c.tie_embeddings},
      {"mtp_layers", c.mtp_layers},
      {"attention", {{"num_heads", c.n_head}, {"num_kv_heads", c.n_head_kv}, {"head_dim", c.head_dim},
                     {"rope_dim", c.rope_dim}, {"rope_theta", c.rope_theta}, {"rope_sections", c.rope_sections}}},
      {"gdn", {{"num_key_heads", c.hk}, {"num_value_heads", c.hv}, {"key_head_dim", c.dk},
               {"value_head_dim", c.dv}, {"conv_kernel", c.conv_kernel}}},
      {"moe", {{"num_experts", c.n_experts}, {"experts_per_token", c.top_k}, {"expert_ffn", c.expert_ffn},
               {"shared_ffn", c.shared_ffn}, {"num_shared_experts", c.n_shared_experts}}},
      {"tokens", {{"bos", OptionalJson(c.bos_token_id)}, {"pad", OptionalJson(c.pad_token_id)},
                  {"eos", c.eos_token_ids}, {"mask", OptionalJson(c.mask_token_id)}}},
  };
  if (c.family == model::ModelFamily::kCloverMoe) {
    const model::DiffusionConfig& d = c.diffusion;
    h["diffusion"] = {
        {"block_size", d.block_size},
        {"shift_logits", d.shift_logits},
        {"block_alignment", d.block_alignment == model::BlockAlignment::kAnswer ? "answer" : "absolute"},
        {"preview_gdn", d.preview_gdn ? model::PreviewGdnName(*d.preview_gdn) : "causal"},
        {"coreset_mass", FloatJson(d.coreset_mass)},
        {"coreset_min_experts", d.coreset_min_experts},
        {"preview_topk", c.effective_preview_topk()},
        {"has_preview_tensors", c.has_preview_tensors},
    };
  }
  return h;
}

std::string HumanCount(double n) {
  const char* units[] = {"", "K", "M", "B", "T"};
  int u = 0;
  while (n >= 1000 && u < 4) {
    n /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.2f%s", n, units[u]);
  return buf;
}

std::string HumanBytes(double n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (n >= 1024 && u < 4) {
    n /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", n, units[u]);
  return buf;
}

void PrintHparams(const json& h, const std::string& prefix) {
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it->is_object()) {
      PrintHparams(*it, prefix + it.key() + ".");
    } else {
      std::printf("  %-34s %s\n", (prefix + it.key()).c_str(), it->dump().c_str());
    }
  }
}

int RunInfo(const InfoOptions& o) {
  auto opened = model::OpenModel(o.model);
  if (!opened.ok()) return ReportError(opened.status());
  model::MapReport report;
  auto weights = model::BuildWeights(*opened, &report);
  if (!weights.ok()) return ReportError(weights.status());
  const model::ModelConfig& c = weights->config;

  std::map<std::string, std::pair<int64_t, uint64_t>> histogram;  // dtype -> (tensors, bytes)
  uint64_t file_bytes = 0;
  int64_t file_params = 0;
  for (const auto& [name, t] : opened->tensors) {
    auto& h = histogram[DTypeName(t.view.dtype)];
    h.first += 1;
    h.second += t.view.nbytes;
    file_bytes += t.view.nbytes;
    file_params += t.view.numel();
  }
  int64_t total = 0;
  model::ForEachCanonicalTensor(*weights, [&](const std::string&, const TensorView& v) { total += v.numel(); });
  // Active per token: everything except the routed experts a token does not select.
  int64_t inactive = 0;
  for (const model::LayerWeights& l : weights->layers) {
    if (l.moe.expert_gate.empty()) continue;
    const int64_t per_expert = l.moe.expert_gate[0].numel() + l.moe.expert_up[0].numel() + l.moe.expert_down[0].numel();
    inactive += per_expert * (c.n_experts - c.top_k);
  }
  const int64_t active = total - inactive;
  // Per sequence: F32 K and V for every attention layer; GDN recurrent state [hv, dk, dv] plus the
  // last conv_kernel-1 pre-conv rows, F32.
  const uint64_t kv_bytes = static_cast<uint64_t>(c.n_attention_layers()) * 2 * c.kv_dim() * o.ctx * 4;
  const uint64_t state_bytes =
      static_cast<uint64_t>(c.n_gdn_layers()) *
      (static_cast<uint64_t>(c.hv) * c.dk * c.dv + static_cast<uint64_t>(c.conv_kernel - 1) * c.conv_dim()) * 4;

  const char* format = opened->files.format == model::ModelFormat::kGguf ? "gguf" : "safetensors";
  if (o.json) {
    json hist = json::object();
    for (const auto& [dtype, h] : histogram) hist[dtype] = {{"tensors", h.first}, {"bytes", h.second}};
    json out = {
        {"model", o.model},
        {"format", format},
        {"files", opened->files.data_files},
        {"family", model::ModelFamilyName(c.family)},
        {"architecture", c.source_arch},
        {"hparams", HparamsJson(c)},
        {"tensors", {{"in_files", opened->tensors.size()}, {"mapped", report.mapped},
                     {"ignored", report.ignored.size()}, {"dtypes", hist}}},
        {"params", {{"total", total}, {"active", active}, {"in_files", file_params}}},
        {"bytes", file_bytes},
        {"memory_per_sequence", {{"ctx", o.ctx}, {"kv_cache_bytes", kv_bytes}, {"kv_cache_dtype", "F32"},
                                 {"gdn_state_bytes", state_bytes}, {"total_bytes", kv_bytes + state_bytes}}},
    };
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("model:        %s\n", o.model.c_str());
  std::printf("format:       %s (%zu file%s)\n", format, opened->files.data_files.size(),
              opened->files.data_files.size() == 1 ? "" : "s");
  std::printf("family:       %s\n", model::ModelFamilyName(c.family));
  std::printf("architecture: %s\n", c.source_arch.c_str());
  std::printf("hparams:\n");
  PrintHparams(HparamsJson(c), "");
  std::printf("tensors:      %zu in files, %d mapped, %zu ignored (MTP / vision)\n", opened->tensors.size(),
              report.mapped, report.ignored.size());
  for (const auto& [dtype, h] : histogram) {
    std::printf("  %-8s %6" PRId64 " tensors  %s\n", dtype.c_str(), h.first, HumanBytes(h.second).c_str());
  }
  std::printf("params:       %s total, %s active per token (%" PRId64 " / %" PRId64 "), %s in files\n",
              HumanCount(total).c_str(), HumanCount(active).c_str(), total, active, HumanCount(file_params).c_str());
  std::printf("bytes:        %s (%" PRIu64 ")\n", HumanBytes(file_bytes).c_str(), file_bytes);
  std::printf("memory per sequence at ctx %" PRId64 ": KV cache (F32) %s + GDN state %s = %s\n", o.ctx,
              HumanBytes(kv_bytes).c_str(), HumanBytes(state_bytes).c_str(), HumanBytes(kv_bytes + state_bytes).c_str());
  return 0;
}

}  // namespace

void RegisterInfoCommand(CLI::App& app) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Show a model's family, hyper-parameters, tensors, parameters and memory");
  cmd->add_option("model", opts->model, "GGUF file, .safetensors file or model directory")->required();
  cmd->add_option("--ctx", opts->ctx, "context length for the per-sequence memory estimate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "print JSON");
  cmd->callback([opts] { SetExitCode(RunInfo(*opts)); });
}

}  // namespace clover::cli
