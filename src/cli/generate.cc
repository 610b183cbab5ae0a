// `clover generate MODEL --ids ... --n N --greedy [--json]`: greedy AR continuation ids.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/model_cli.h"

namespace clover::cli {
namespace {

struct GenerateOptions {
  std::string model;
  std::string ids;
  int64_t n = 16;
  bool greedy = false;
  bool json = false;
  int threads = 0;
};

int32_t Argmax(const float* logits, int64_t vocab) {
  return static_cast<int32_t>(std::max_element(logits, logits + vocab) - logits);
}

Status RunGenerate(const GenerateOptions& opts) {
  if (!opts.greedy) {
    return InvalidArgument("generate: only greedy decoding is available here; pass --greedy");
  }
  if (opts.n < 0) return InvalidArgument("--n: " + std::to_string(opts.n) + ", expected >= 0");
  CLOVER_ASSIGN_OR_RETURN(std::vector<int64_t> ids64, ParseIntList(opts.ids, "--ids"));
  CLOVER_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, LoadEngine(opts.model, opts.threads));
  const int64_t vocab = engine->model->config().vocab_size;
  std::vector<int32_t> prompt;
  for (int64_t id : ids64) {
    if (id < 0 || id >= vocab) {
      return InvalidArgument("--ids: token id " + std::to_string(id) +
                             " is outside the vocabulary [0, " + std::to_string(vocab) + ") of " +
                             opts.model);
    }
    prompt.push_back(static_cast<int32_t>(id));
  }
  model::SequenceState seq = engine->model->NewSequence();
  CLOVER_ASSIGN_OR_RETURN(
      model::ForwardLogits out,
      AppendTokens(*engine, seq, prompt, {static_cast<int64_t>(prompt.size()) - 1}));
  std::vector<int64_t> generated;
  int32_t next = Argmax(out.row(0), vocab);
  for (int64_t k = 0; k < opts.n; ++k) {
    generated.push_back(next);
    if (k + 1 == opts.n) break;
    CLOVER_ASSIGN_OR_RETURN(out, AppendTokens(*engine, seq, {next}, {0}));
    next = Argmax(out.row(0), vocab);
  }
  if (opts.json) {
    std::printf("%s\n", nlohmann::json({{"ids", generated}}).dump().c_str());
  } else {
    for (size_t i = 0; i < generated.size(); ++i)
      std::printf("%s%lld", i ? "," : "", static_cast<long long>(generated[i]));
    std::printf("\n");
  }
  return Status::Ok();
}

}  // namespace

void RegisterGenerateCommand(CLI::App& app) {
  auto opts = std::make_shared<GenerateOptions>();
  CLI::App* cmd =
      app.add_subcommand("generate", "print the greedy continuation of a prompt of token ids");
  cmd->add_option("model", opts->model, "GGUF file, .safetensors file or model directory")
      ->required();
  cmd->add_option("--ids", opts->ids, "prompt token ids, comma-separated")->required();
  cmd->add_option("--n", opts->n, "number of tokens to generate (default 16)");
  cmd->add_flag("--greedy", opts->greedy, "argmax decoding");
  cmd->add_flag("--json", opts->json, "print {\"ids\": [...]}");
  AddThreadsOption(cmd, &opts->threads);
  cmd->callback([opts] {
    Status s = RunGenerate(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
