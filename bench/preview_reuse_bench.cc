// Cost of diffusion preview passes with expert budget + live-row reuse (clover-decoding.md §8,
// §9.1). One 32-row pass after a 64-token prompt: plain, as a refresh (the plain pass that also
// fills the cache) and as reuse passes computing L live rows inside the refresh's coreset. One
// whole block through the diffusion decoder with tau > 1 (exactly one row fixed per pass, 32
// passes, the slowest schedule) for reuse_passes R = 0 (off), 1 and 5. Counter `experts`:
// distinct routed experts per MoE layer and pass (mean over layers), which at batch 1 sets how
// many expert weights a pass reads.
//
// CLOVER_BENCH_MODEL=model.gguf build/bench/preview_reuse_bench   (default: the random "medium"
// shape in F32); CLOVER_BENCH_THREADS=N (default: every core).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "bench_model.h"
#include "decode/generator.h"
#include "decode/registry.h"
#include "decode/request.h"
#include "model/model.h"

namespace clover::model {
namespace {

constexpr int kPrompt = 64;
constexpr int kBlock = 32;
constexpr int kFixed = 16;  // mid-block: the first half of the rows is fixed

struct Bench : clover::bench::BenchModel {
  std::vector<int32_t> block;
  PreviewCache cache;
};

Status Setup(Bench* b) {
  CLOVER_TRY(clover::bench::LoadBenchModel(kPrompt, b));
  const ModelConfig& cfg = b->config();
  const int32_t mask = static_cast<int32_t>(cfg.mask_token_id.value_or(cfg.vocab_size - 1));
  for (int j = 0; j < kBlock; ++j)
    b->block.push_back(j < kFixed ? static_cast<int32_t>((j * 104729 + 7) % cfg.vocab_size) : mask);
  return Status::Ok();
}

// Runs one preview of the block with `reuse`, with logits for the masked rows that run (as the
// decoder asks), and returns the mean distinct experts per MoE layer.
double Pass(Bench& b, const PreviewReuse& reuse) {
  std::vector<int64_t> logit_rows;
  for (int64_t j = kFixed; j < kBlock; ++j) {
    if (reuse.refresh || std::binary_search(reuse.live_rows.begin(), reuse.live_rows.end(), j))
      logit_rows.push_back(j);
  }
  ForwardBatch batch;
  batch.previews.push_back({&*b.seq, b.block, b.seq->length(), std::move(logit_rows), reuse});
  Result<ForwardLogits> out = b.model->Forward(batch, b.scratch);
  if (!out.ok()) std::abort();
  const std::vector<int>& e = out->distinct_experts;
  return static_cast<double>(std::accumulate(e.begin(), e.end(), 0)) / e.size();
}

void BM_PlainPreview(benchmark::State& state, Bench* b) {
  double experts = 0;
  for (auto _ : state) experts = Pass(*b, {});
  state.counters["experts"] = experts;
}

void BM_RefreshPreview(benchmark::State& state, Bench* b) {
  double experts = 0;
  for (auto _ : state) experts = Pass(*b, {&b->cache, true, {}});
  state.counters["experts"] = experts;
}

// Arg: live rows, the last ones of the block (the masked rows and the row fixed last).
void BM_ReusePreview(benchmark::State& state, Bench* b) {
  Pass(*b, {&b->cache, true, {}});
  std::vector<int64_t> live(state.range(0));
  std::iota(live.begin(), live.end(), kBlock - state.range(0));
  double experts = 0;
  for (auto _ : state) experts = Pass(*b, {&b->cache, false, live});
  state.counters["experts"] = experts;
}

// Arg: reuse_passes. Prefill + one block of 32 preview passes (no commit: the budget ends there).
void BM_Block(benchmark::State& state, Bench* b) {
  decode::DecodeRequest req;
  req.prompt = b->prompt;
  req.block_size = kBlock;
  req.max_tokens = kBlock;
  req.threshold = 2.0;  // > 1: exactly one row per pass
  req.reuse_passes = static_cast<int>(state.range(0));
  decode::DecodeModelInfo info =
      decode::DecodeModelInfoFromConfig(b->weights.config, b->weights.config.vocab_size, {});
  info.eos_ids.clear();  // every run takes the same 32 passes
  decode::Generator gen(*b->model);
  decode::GenerateResult last;
  for (auto _ : state) {
    Result<std::unique_ptr<decode::Decoder>> d =
        decode::CreateDecoder(req, info, [](int32_t) { return std::string(); });
    if (!d.ok()) std::abort();
    Result<decode::GenerateResult> r = gen.Run(**d);
    if (!r.ok()) std::abort();
    last = std::move(*r);
  }
  int64_t experts = 0;
  for (int64_t e : last.distinct_experts_sum) experts += e;
  state.counters["passes"] = static_cast<double>(last.counters.passes());
  state.counters["experts"] =
      static_cast<double>(experts) / (last.forward_calls * last.distinct_experts_sum.size());
}

}  // namespace
}  // namespace clover::model

int main(int argc, char** argv) {
  using namespace clover::model;
  Bench bench;
  const clover::Status setup = Setup(&bench);
  if (setup.ok()) {
    benchmark::RegisterBenchmark("BM_PlainPreview", BM_PlainPreview, &bench)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_RefreshPreview", BM_RefreshPreview, &bench)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_ReusePreview", BM_ReusePreview, &bench)
        ->Arg(17)
        ->Arg(8)
        ->Arg(4)
        ->Arg(2)
        ->Arg(1)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_Block", BM_Block, &bench)
        ->Arg(0)
        ->Arg(1)
        ->Arg(5)
        ->Unit(benchmark::kMillisecond);
  }
  return clover::bench::RunBenchmarks("preview_reuse_bench", setup, argc, argv);
}
