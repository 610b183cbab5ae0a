// `clover logits MODEL --ids ... [--chunks ...] [--top K] --out FILE.json`: logits of every
// prompt position, prefilled in the given chunks. With `--block ROWS [--preview-gdn MODE]`: the
// prompt is the committed prefix and ONE preview pass over the block rows is written instead
// (logits per block row and the coreset per MoE layer: the hook for golden checks).
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "cli/command.h"
#include "cli/model_cli.h"

namespace clover::cli {
namespace {

struct LogitsOptions {
  std::string model;
  std::string ids;
  std::string chunks;
  int top = 5;
  std::string out;
  int threads = 0;
  std::string block;        // preview rows; -1 = the mask id
  std::string preview_gdn;  // "", "causal" or "bidirectional"
};

// Returns the ids of the `k` largest logits, descending (ties -> lower id).
std::vector<int64_t> TopK(const float* logits, int64_t vocab, int k) {
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  k = static_cast<int>(std::min<int64_t>(k, vocab));
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  order.resize(k);
  return order;
}

Status WriteJson(const nlohmann::json& doc, const std::string& path) {
  std::ofstream f(path);
  if (!f) return InvalidArgument("--out: cannot open '" + path + "' for writing");
  f << doc.dump() << "\n";
  if (!f) return DataLoss("--out: write to '" + path + "' failed");
  return Status::Ok();
}

// The prefix causally (no logits), then one preview pass over `block`.
Status RunPreview(Engine& engine, const std::vector<int32_t>& prefix,
                  const std::vector<int64_t>& prefix64, const std::vector<int32_t>& block,
                  const LogitsOptions& opts) {
  const int64_t vocab = engine.model->config().vocab_size;
  model::SequenceState seq = engine.model->NewSequence();
  if (!prefix.empty()) {
    Result<model::ForwardLogits> causal = AppendTokens(engine, seq, prefix, {});
    if (!causal.ok()) return causal.status();
  }
  model::ForwardBatch batch;
  model::PreviewGroup g;
  g.state = &seq;
  g.tokens = block;
  g.first_pos = seq.length();
  g.logit_rows.resize(block.size());
  std::iota(g.logit_rows.begin(), g.logit_rows.end(), 0);
  batch.previews.push_back(g);
  CLOVER_ASSIGN_OR_RETURN(model::ForwardLogits out, engine.model->Forward(batch, engine.scratch));
  nlohmann::json logits_json = nlohmann::json::array();
  nlohmann::json top_json = nlohmann::json::array();
  for (int64_t r = 0; r < out.n_rows; ++r) {
    logits_json.push_back(std::vector<float>(out.row(r), out.row(r) + vocab));
    top_json.push_back(TopK(out.row(r), vocab, opts.top));
  }
  nlohmann::json doc = {{"ids", prefix64},
                        {"block", block},
                        {"preview_gdn", model::PreviewGdnName(engine.model->preview_gdn())},
                        {"logits", logits_json},
                        {"top", top_json},
                        {"coreset", out.coresets.at(0)}};
  return WriteJson(doc, opts.out);
}

Status RunLogits(const LogitsOptions& opts) {
  CLOVER_ASSIGN_OR_RETURN(std::vector<int64_t> ids64, ParseIntList(opts.ids, "--ids"));
  std::vector<int64_t> chunks;
  if (!opts.chunks.empty()) {
    CLOVER_ASSIGN_OR_RETURN(chunks, ParseIntList(opts.chunks, "--chunks"));
  }
  int64_t total = 0;
  for (int64_t c : chunks) {
    if (c <= 0)
      return InvalidArgument("--chunks: chunk size " + std::to_string(c) + ", expected > 0");
    total += c;
  }
  if (total > static_cast<int64_t>(ids64.size())) {
    return InvalidArgument("--chunks: sizes add up to " + std::to_string(total) +
                           " but --ids has " + std::to_string(ids64.size()) + " ids");
  }
  if (total < static_cast<int64_t>(ids64.size())) chunks.push_back(ids64.size() - total);
  if (opts.top < 0)
    return InvalidArgument("--top: " + std::to_string(opts.top) + ", expected >= 0");
  CLOVER_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, LoadEngine(opts.model, opts.threads));
  const int64_t vocab = engine->model->config().vocab_size;
  std::vector<int32_t> ids;
  for (int64_t id : ids64) {
    if (id < 0 || id >= vocab) {
      return InvalidArgument("--ids: token id " + std::to_string(id) +
                             " is outside the vocabulary [0, " + std::to_string(vocab) + ") of " +
                             opts.model);
    }
    ids.push_back(static_cast<int32_t>(id));
  }

  std::vector<int32_t> block;
  if (!opts.block.empty()) {
    CLOVER_ASSIGN_OR_RETURN(std::vector<int64_t> rows, ParseIntList(opts.block, "--block"));
    const std::optional<int64_t> mask = engine->model->config().mask_token_id;
    for (int64_t id : rows) {
      if (id == -1) {
        if (!mask)
          return InvalidArgument("--block: row -1 asks for the mask token, but " + opts.model +
                                 " has no mask_token_id");
        id = *mask;
      }
      if (id < 0 || id >= vocab)
        return InvalidArgument("--block: token id " + std::to_string(id) +
                               " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
      block.push_back(static_cast<int32_t>(id));
    }
  }
  if (!opts.preview_gdn.empty()) {
    if (block.empty()) return InvalidArgument("--preview-gdn: only meaningful with --block");
    if (opts.preview_gdn != "causal" && opts.preview_gdn != "bidirectional")
      return InvalidArgument("--preview-gdn: '" + opts.preview_gdn +
                             "', expected causal or bidirectional");
    CLOVER_TRY(engine->model->set_preview_gdn(opts.preview_gdn == "causal"
                                                  ? model::PreviewGdn::kCausal
                                                  : model::PreviewGdn::kBidirectional));
  }
  if (!block.empty()) return RunPreview(*engine, ids, ids64, block, opts);

  nlohmann::json logits_json = nlohmann::json::array();
  nlohmann::json top_json = nlohmann::json::array();
  model::SequenceState seq = engine->model->NewSequence();
  size_t at = 0;
  for (int64_t c : chunks) {
    std::vector<int32_t> piece(ids.begin() + at, ids.begin() + at + c);
    std::vector<int64_t> rows(c);
    std::iota(rows.begin(), rows.end(), 0);
    CLOVER_ASSIGN_OR_RETURN(model::ForwardLogits out, AppendTokens(*engine, seq, piece, rows));
    for (int64_t r = 0; r < out.n_rows; ++r) {
      logits_json.push_back(std::vector<float>(out.row(r), out.row(r) + vocab));
      top_json.push_back(TopK(out.row(r), vocab, opts.top));
    }
    at += c;
  }
  nlohmann::json doc = {{"ids", ids64}, {"logits", logits_json}, {"top", top_json}};
  return WriteJson(doc, opts.out);
}

}  // namespace

void RegisterLogitsCommand(CLI::App& app) {
  auto opts = std::make_shared<LogitsOptions>();
  CLI::App* cmd = app.add_subcommand("logits", "write the logits of every prompt position as JSON");
  cmd->add_option("model", opts->model, "GGUF file, .safetensors file or model directory")
      ->required();
  cmd->add_option("--ids", opts->ids, "prompt token ids, comma-separated")->required();
  cmd->add_option("--chunks", opts->chunks,
                  "prefill chunk sizes, comma-separated; each continues from the previous state "
                  "(rest of the prompt: one more chunk)");
  cmd->add_option("--top", opts->top, "ids of the K largest logits per position (default 5)");
  cmd->add_option("--block", opts->block,
                  "block rows after the prompt, comma-separated ids (-1 = the mask id): runs the "
                  "prompt causally, then one preview pass, and writes the block rows' logits and "
                  "the coreset per MoE layer");
  cmd->add_option("--preview-gdn", opts->preview_gdn,
                  "GDN of the preview pass: causal or bidirectional (default: the model's)");
  cmd->add_option("--out", opts->out, "output JSON file")->required();
  AddThreadsOption(cmd, &opts->threads);
  cmd->callback([opts] {
    Status s = RunLogits(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
