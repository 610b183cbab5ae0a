// `clover bench [MODEL | --random NAME] [--threads N] [--json]`: prefill, decode and N-row
// append timings of the CPU forward.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/command.h"
#include "cli/model_cli.h"
#include "model/random_weights.h"

namespace clover::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::string random;
  std::string dtype = "bf16";
  int threads = 0;
  int reps = 3;
  int64_t rows = 32;
  bool json = false;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int32_t> Ids(int64_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> d(0, vocab - 1);
  std::vector<int32_t> ids(n);
  for (int32_t& id : ids) id = static_cast<int32_t>(d(rng));
  return ids;
}

// Returns the best of `reps` wall times of `fn` (seconds), after one warm-up run.
template <typename Fn>
Result<double> BestOf(int reps, Fn fn) {
  CLOVER_TRY(fn().status());
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const double t0 = Now();
    CLOVER_TRY(fn().status());
    best = std::min(best, Now() - t0);
  }
  return best;
}

Status RunBench(const BenchOptions& opts) {
  if (opts.model.empty() == opts.random.empty()) {
    return InvalidArgument("bench: give either MODEL or --random NAME (tiny, medium)");
  }
  if (opts.reps < 1 || opts.rows < 1) {
    return InvalidArgument("bench: --reps " + std::to_string(opts.reps) + " and --rows " +
                           std::to_string(opts.rows) + " must be >= 1");
  }
  std::unique_ptr<Engine> engine;
  std::string name = opts.model;
  if (!opts.random.empty()) {
    CLOVER_ASSIGN_OR_RETURN(model::ModelConfig config, model::RandomModelConfig(opts.random));
    DType dtype;
    if (opts.dtype == "f32")
      dtype = DType::kF32;
    else if (opts.dtype == "bf16")
      dtype = DType::kBF16;
    else if (opts.dtype == "f16")
      dtype = DType::kF16;
    else
      return InvalidArgument("--dtype: '" + opts.dtype + "', expected f32, bf16 or f16");
    CLOVER_ASSIGN_OR_RETURN(engine,
                            MakeEngine(model::MakeRandomWeights(config, 1, dtype), opts.threads));
    name = "random:" + opts.random + ":" + opts.dtype;
  } else {
    CLOVER_ASSIGN_OR_RETURN(engine, LoadEngine(opts.model, opts.threads));
  }
  const int64_t vocab = engine->model->config().vocab_size;
  model::SequenceState seq = engine->model->NewSequence();

  auto prefill = [&](int64_t n) -> Result<double> {
    const std::vector<int32_t> ids = Ids(n, vocab, n);
    CLOVER_ASSIGN_OR_RETURN(double t, BestOf(opts.reps, [&] {
                              seq.Reset();
                              return AppendTokens(*engine, seq, ids, {n - 1});
                            }));
    return n / t;
  };
  CLOVER_ASSIGN_OR_RETURN(double pp64, prefill(64));
  CLOVER_ASSIGN_OR_RETURN(double pp512, prefill(512));

  // Decode and the N-row pass continue from a 64-token prompt.
  const std::vector<int32_t> prompt = Ids(64, vocab, 7);
  seq.Reset();
  CLOVER_TRY(AppendTokens(*engine, seq, prompt, {63}).status());
  const model::SequenceSnapshot after_prompt = seq.Snapshot();
  constexpr int64_t kDecode = 32;
  const std::vector<int32_t> steps = Ids(kDecode, vocab, 9);
  CLOVER_ASSIGN_OR_RETURN(double t_tg, BestOf(opts.reps, [&]() -> Result<model::ForwardLogits> {
                            seq.Restore(after_prompt);
                            Result<model::ForwardLogits> out = InvalidArgument("no steps");
                            for (int32_t id : steps) {
                              out = AppendTokens(*engine, seq, {id}, {0});
                              if (!out.ok()) return out;
                            }
                            return out;
                          }));
  const std::vector<int32_t> block = Ids(opts.rows, vocab, 11);
  std::vector<int64_t> all_rows(opts.rows);
  for (int64_t i = 0; i < opts.rows; ++i) all_rows[i] = i;
  CLOVER_ASSIGN_OR_RETURN(double t_rows, BestOf(opts.reps, [&] {
                            seq.Restore(after_prompt);
                            return AppendTokens(*engine, seq, block, all_rows);
                          }));

  const double tg = kDecode / t_tg;
  const std::string isa = IsaName(engine->table->isa);
  if (opts.json) {
    nlohmann::json j = {{"model", name},
                        {"threads", engine->pool->size()},
                        {"isa", isa},
                        {"pp64_tok_s", pp64},
                        {"pp512_tok_s", pp512},
                        {"tg32_tok_s", tg},
                        {"append_rows", opts.rows},
                        {"append_ms", t_rows * 1e3}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("model    %s\nthreads  %d\nisa      %s\n", name.c_str(), engine->pool->size(),
                isa.c_str());
    std::printf("%-22s %12s\n", "test", "result");
    std::printf("%-22s %10.1f tok/s\n", "pp64", pp64);
    std::printf("%-22s %10.1f tok/s\n", "pp512", pp512);
    std::printf("%-22s %10.1f tok/s\n", "tg32", tg);
    std::printf("%-22s %10.2f ms\n", ("append " + std::to_string(opts.rows) + " rows").c_str(),
                t_rows * 1e3);
  }
  return Status::Ok();
}

}  // namespace

void RegisterBenchCommand(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "measure prefill (pp64, pp512), decode (tg32) and one N-row pass");
  cmd->add_option("model", opts->model, "GGUF file, .safetensors file or model directory");
  cmd->add_option("--random", opts->random, "benchmark a random model instead: tiny or medium");
  cmd->add_option("--dtype", opts->dtype, "weight dtype of --random: f32, bf16 (default) or f16");
  cmd->add_option("--rows", opts->rows, "rows of the single append pass (default 32)");
  cmd->add_option("--reps", opts->reps, "timed repetitions, best kept (default 3)");
  cmd->add_flag("--json", opts->json, "print JSON");
  AddThreadsOption(cmd, &opts->threads);
  cmd->callback([opts] {
    Status s = RunBench(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
