// The model the model-level Google benchmarks run: CLOVER_BENCH_MODEL=model.gguf (e.g. a
// `clover synth --preset qwen36-35b-a3b` file), else the random "medium" shape in F32 (with a mask token), with
// CLOVER_BENCH_THREADS threads (default: every core) and a prefilled prompt.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "kernels/kernel_table.h"
#include "model/loader.h"
#include "model/model.h"
#include "model/random_weights.h"

namespace clover::bench {

struct BenchModel {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<kernels::KernelContext> ctx;
  model::ModelWeights weights;
  std::unique_ptr<model::Model> model;
  model::ForwardScratch scratch;
  std::vector<int32_t> prompt;
  std::optional<model::SequenceState> seq;  // `prompt`, prefilled

  const model::ModelConfig& config() const { return weights.config; }
  // A deterministic token id of the vocabulary, never the mask id.
  int32_t Token(int64_t i) const {
    const int64_t vocab = config().vocab_size - 1;  // the mask, when there is one, is last
    return static_cast<int32_t>((i * 7919 + 13) % vocab);
  }
};

// Fills `b` (a BenchModel, or a benchmark's struct extending it).
inline Status LoadBenchModel(int prompt_tokens, BenchModel* b) {
  if (const char* path = std::getenv("CLOVER_BENCH_MODEL")) {
    CLOVER_ASSIGN_OR_RETURN(b->weights, model::LoadModel(path));
  } else {
    CLOVER_ASSIGN_OR_RETURN(model::ModelConfig c, model::RandomModelConfig("medium"));
    c.mask_token_id = c.vocab_size - 1;  // previews and the diffusion decoders need one
    b->weights = model::MakeRandomWeights(c, 1, DType::kF32);
  }
  const char* threads = std::getenv("CLOVER_BENCH_THREADS");
  b->pool = std::make_unique<ThreadPool>(threads != nullptr ? std::atoi(threads) : 0);
  CLOVER_ASSIGN_OR_RETURN(const kernels::KernelTable* table, kernels::SelectKernelTable());
  b->ctx = std::make_unique<kernels::KernelContext>(kernels::KernelContext{*b->pool, *table});
  CLOVER_ASSIGN_OR_RETURN(b->model, model::Model::Create(b->weights, *b->ctx));
  b->seq.emplace(b->model->NewSequence());
  for (int i = 0; i < prompt_tokens; ++i) b->prompt.push_back(b->Token(i));
  model::ForwardBatch prefill;
  prefill.appends.push_back({&*b->seq, b->prompt, 0, {}});
  return b->model->Forward(prefill, b->scratch).status();
}

// Runs the benchmarks registered so far; `name` prefixes a setup error. Returns main's exit code.
inline int RunBenchmarks(const char* name, const Status& setup, int argc, char** argv) {
  if (!setup.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, setup.ToString().c_str());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace clover::bench
