// The model the model-level Google benchmarks run: CLOVER_BENCH_MODEL=model.gguf (e.g. a
// `clover synth --preset qwen36-35b-a3b` file), else the random "medium" shape in F32, with
// CLOVER_BENCH_THREADS threads (default: every core) and a prefilled prompt.
#pragma once

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
  std::optional<model::SequenceState> seq;  // the prompt, prefilled

  const model::ModelConfig& config() const { return weights.config; }
  // A deterministic token id of the vocabulary, never the mask id.
  int32_t Token(int64_t i) const {
    const int64_t vocab = config().vocab_size - 1;  // the mask, when there is one, is last
    return static_cast<int32_t>((i * 7919 + 13) % vocab);
  }
};

inline Result<std::unique_ptr<BenchModel>> LoadBenchModel(int prompt_tokens) {
  auto b = std::make_unique<BenchModel>();
  if (const char* path = std::getenv("CLOVER_BENCH_MODEL")) {
    CLOVER_ASSIGN_OR_RETURN(b->weights, model::LoadModel(path));
  } else {
    CLOVER_ASSIGN_OR_RETURN(model::ModelConfig c, model::RandomModelConfig("medium"));
    b->weights = model::MakeRandomWeights(c, 1, DType::kF32);
  }
  const char* threads = std::getenv("CLOVER_BENCH_THREADS");
  b->pool = std::make_unique<ThreadPool>(threads != nullptr ? std::atoi(threads) : 0);
  CLOVER_ASSIGN_OR_RETURN(const kernels::KernelTable* table, kernels::SelectKernelTable());
  b->ctx = std::make_unique<kernels::KernelContext>(kernels::KernelContext{*b->pool, *table});
  CLOVER_ASSIGN_OR_RETURN(b->model, model::Model::Create(b->weights, *b->ctx));
  b->seq.emplace(b->model->NewSequence());
  std::vector<int32_t> prompt(prompt_tokens);
  for (int i = 0; i < prompt_tokens; ++i) prompt[i] = b->Token(i);
  model::ForwardBatch prefill;
  prefill.appends.push_back({&*b->seq, prompt, 0, {}});
  CLOVER_TRY(b->model->Forward(prefill, b->scratch).status());
  return b;
}

}  // namespace clover::bench
