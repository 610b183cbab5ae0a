// `clover logits MODEL --ids ... [--chunks ...] [--top K] --out FILE.json`: logits of every
// prompt position, prefilled in the given chunks.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

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
  std::ofstream f(opts.out);
  if (!f) return InvalidArgument("--out: cannot open '" + opts.out + "' for writing");
  f << doc.dump() << "\n";
  if (!f) return DataLoss("--out: write to '" + opts.out + "' failed");
  return Status::Ok();
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
  cmd->add_option("--out", opts->out, "output JSON file")->required();
  AddThreadsOption(cmd, &opts->threads);
  cmd->callback([opts] {
    Status s = RunLogits(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
