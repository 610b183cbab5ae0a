// Shared pieces of the commands that run the forward: engine set-up and id-list parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "decode/decoder.h"
#include "kernels/kernel_context.h"
#include "model/model.h"
#include "model/weights.h"

namespace clover::cli {

// A loaded model with its thread pool and kernel table; members in dependency order.
struct Engine {
  std::unique_ptr<ThreadPool> pool;
  const kernels::KernelTable* table = nullptr;
  std::unique_ptr<kernels::KernelContext> ctx;
  model::ModelWeights weights;
  std::unique_ptr<model::Model> model;
  model::ForwardScratch scratch;
};

// Returns an engine over the model at `path` (LoadModel) with `threads` threads (0 = all cores)
// and the kernels of SelectIsa() (CLOVER_FORCE_ISA honoured).
Result<std::unique_ptr<Engine>> LoadEngine(const std::string& path, int threads);
// Returns an engine over `weights` (e.g. a random model).
Result<std::unique_ptr<Engine>> MakeEngine(model::ModelWeights weights, int threads);

// The embedded demo model: models/clover-demo under the working directory, else beside the build
// directory that holds this binary. NotFound (prefixed with `command`) lists where it looked.
Result<std::string> DemoModelPath(const std::string& command);

// Parses "1,2,3" into integers; errors name `flag` and the bad item.
Result<std::vector<int64_t>> ParseIntList(const std::string& text, const std::string& flag);

// Appends `ids` to `seq` in one forward call and returns the logits of the rows in `logit_rows`.
Result<model::ForwardLogits> AppendTokens(Engine& engine, model::SequenceState& seq,
                                          const std::vector<int32_t>& ids,
                                          std::vector<int64_t> logit_rows);

// Adds `--threads N` to `cmd`.
void AddThreadsOption(CLI::App* cmd, int* threads);

// Adds the decoders' tuning options to `cmd`, stored into `request`: `--frontier-floor`,
// `--frontier-iters`, `--fused-commit`, `--draft-min`, `--draft-max` and `--reuse-passes`.
void AddDecoderOptions(CLI::App* cmd, decode::DecodeRequest* request);

}  // namespace clover::cli
