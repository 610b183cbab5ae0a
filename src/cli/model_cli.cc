// Engine set-up for the forward commands.
#include "cli/model_cli.h"

#include <charconv>
#include <filesystem>

#include "kernels/kernel_table.h"
#include "model/loader.h"

namespace clover::cli {

Result<std::unique_ptr<Engine>> MakeEngine(model::ModelWeights weights, int threads) {
  if (threads < 0) {
    return InvalidArgument("--threads: " + std::to_string(threads) +
                           ", expected >= 0 (0 = all cores)");
  }
  auto engine = std::make_unique<Engine>();
  CLOVER_ASSIGN_OR_RETURN(engine->table, kernels::SelectKernelTable());
  engine->pool = std::make_unique<ThreadPool>(threads);
  engine->ctx = std::make_unique<kernels::KernelContext>(
      kernels::KernelContext{*engine->pool, *engine->table});
  engine->weights = std::move(weights);
  CLOVER_ASSIGN_OR_RETURN(engine->model, model::Model::Create(engine->weights, *engine->ctx));
  return engine;
}

Result<std::unique_ptr<Engine>> LoadEngine(const std::string& path, int threads) {
  CLOVER_ASSIGN_OR_RETURN(model::ModelWeights weights, model::LoadModel(path));
  return MakeEngine(std::move(weights), threads);
}

Result<std::string> DemoModelPath(const std::string& command) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {fs::path("models") / "clover-demo"};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "models" / "clover-demo");
  for (const fs::path& p : candidates) {
    if (fs::exists(p / "config.json", ec)) return p.string();
  }
  std::string tried;
  for (const fs::path& p : candidates) tried += (tried.empty() ? "" : ", ") + p.string();
  return NotFound(command +
                  ": no MODEL given and the embedded demo model is not there (looked for "
                  "config.json in " +
                  tried + "); pass a model path");
}

Result<std::vector<int64_t>> ParseIntList(const std::string& text, const std::string& flag) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      return InvalidArgument(flag + ": '" + item + "' in '" + text +
                             "' is not an integer (expected a comma-separated list like 1,2,3)");
    }
    out.push_back(v);
    at = comma + 1;
  }
  return out;
}

Result<model::ForwardLogits> AppendTokens(Engine& engine, model::SequenceState& seq,
                                          const std::vector<int32_t>& ids,
                                          std::vector<int64_t> logit_rows) {
  model::ForwardBatch batch;
  model::AppendGroup group;
  group.state = &seq;
  group.tokens = ids;
  group.first_pos = seq.length();
  group.logit_rows = std::move(logit_rows);
  batch.appends.push_back(std::move(group));
  return engine.model->Forward(batch, engine.scratch);
}

void AddThreadsOption(CLI::App* cmd, int* threads) {
  cmd->add_option("--threads", *threads, "worker threads (default: one per core)");
}

void AddDecoderOptions(CLI::App* cmd, decode::DecodeRequest* request) {
  cmd->add_option("--frontier-floor", request->frontier.floor,
                  "frontier: confidence floor of stride rows (default 0.7)");
  cmd->add_option("--frontier-iters", request->frontier.target_iters,
                  "frontier: passes a block should take (default 8)");
  cmd->add_flag("--fused-commit", request->fuse_commit,
                "diffusion: run each commit with the next block's first preview in one forward; "
                "speculative: draft the next round inside each verify pass");
  cmd->add_option("--draft-min", request->speculative.draft_min,
                  "speculative: shortest draft (default 2)");
  cmd->add_option("--draft-max", request->speculative.draft_max,
                  "speculative: longest draft (default 16, at most 32)");
  cmd->add_option("--reuse-passes", request->reuse_passes,
                  "diffusion: recompute every row and the expert coreset every N preview passes "
                  "(or once the masked rows halve); between, only rows that changed run "
                  "(default 0 = off)");
}

}  // namespace clover::cli
