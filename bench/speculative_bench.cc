// What a draft-self round costs against one AR step (clover-decoding.md §9.2 cost model), at
// the model's real shapes: the AR step (1 causal row), the draft (a preview of N + 1 rows), the
// verify (N + 1 causal rows, captured), the fused round (both in one forward) and the rollback
// (Model::TruncateAppend keeping the seed row only, the worst case). Counter `experts`: distinct
// routed experts per MoE layer of the pass, which at batch 1 sets the expert weights it reads.
//
// CLOVER_BENCH_MODEL=model.gguf build/bench/speculative_bench (bench_model.h for the defaults).
#include <benchmark/benchmark.h>

#include <numeric>
#include <utility>

#include "bench_model.h"

namespace clover::bench {
namespace {

constexpr int kPrompt = 64;

struct Round {
  std::vector<int32_t> verify;   // [seed, drafts]
  std::vector<int32_t> preview;  // [anchor, MASK x N]
  std::vector<int64_t> all_rows;
};

Round MakeRound(const BenchModel& b, int n) {
  Round r;
  const int32_t mask = static_cast<int32_t>(b.config().mask_token_id.value_or(b.config().vocab_size - 1));
  for (int j = 0; j <= n; ++j) {
    r.verify.push_back(b.Token(kPrompt + j));
    r.preview.push_back(mask);
    r.all_rows.push_back(j);
  }
  r.preview[0] = r.verify[0];
  return r;
}

double MeanExperts(const model::ForwardLogits& out) {
  const std::vector<int>& e = out.distinct_experts;
  return static_cast<double>(std::accumulate(e.begin(), e.end(), 0)) / e.size();
}

// Times `batch` (built over b.seq after the prompt), the prompt state restored outside the
// timing, and reports the mean distinct experts of the pass.
void TimePass(benchmark::State& state, BenchModel& b, const model::ForwardBatch& batch) {
  const model::SequenceSnapshot prompt = b.seq->Snapshot();
  double experts = 0;
  for (auto _ : state) {
    Result<model::ForwardLogits> out = b.model->Forward(batch, b.scratch);
    if (!out.ok()) std::abort();
    state.PauseTiming();
    b.seq->Restore(prompt);
    state.ResumeTiming();
    experts = MeanExperts(*out);
  }
  state.counters["experts"] = experts;
}

void BM_ArStep(benchmark::State& state, BenchModel* b) {
  const std::vector<int32_t> token = {b->Token(kPrompt)};
  model::ForwardBatch batch;
  batch.appends.push_back({&*b->seq, token, kPrompt, {0}});
  TimePass(state, *b, batch);
}

// Arg: N drafts.
void BM_DraftPass(benchmark::State& state, BenchModel* b) {
  const Round r = MakeRound(*b, static_cast<int>(state.range(0)));
  model::ForwardBatch batch;
  batch.previews.push_back({&*b->seq, r.preview, kPrompt, r.all_rows});
  TimePass(state, *b, batch);
}

void BM_VerifyPass(benchmark::State& state, BenchModel* b) {
  const Round r = MakeRound(*b, static_cast<int>(state.range(0)));
  model::AppendCapture capture;
  model::ForwardBatch batch;
  batch.appends.push_back({&*b->seq, r.verify, kPrompt, r.all_rows, &capture});
  TimePass(state, *b, batch);
}

// The verify plus the next round's draft preview in one forward.
void BM_FusedRound(benchmark::State& state, BenchModel* b) {
  Round r = MakeRound(*b, static_cast<int>(state.range(0)));
  r.preview[0] = r.preview[1];  // the anchor is masked: the next seed is not known yet
  model::AppendCapture capture;
  model::ForwardBatch batch;
  batch.appends.push_back({&*b->seq, r.verify, kPrompt, r.all_rows, &capture});
  const int64_t after = kPrompt + static_cast<int64_t>(r.verify.size());
  batch.previews.push_back({&*b->seq, r.preview, after, r.all_rows});
  TimePass(state, *b, batch);
}

void BM_Rollback(benchmark::State& state, BenchModel* b) {
  const Round r = MakeRound(*b, static_cast<int>(state.range(0)));
  const model::SequenceSnapshot prompt = b->seq->Snapshot();
  model::AppendCapture capture;
  model::ForwardBatch batch;
  batch.appends.push_back({&*b->seq, r.verify, kPrompt, {}, &capture});
  for (auto _ : state) {
    state.PauseTiming();
    b->seq->Restore(prompt);
    if (!b->model->Forward(batch, b->scratch).ok()) std::abort();
    state.ResumeTiming();
    if (!b->model->TruncateAppend(*b->seq, capture, 1).ok()) std::abort();
  }
  b->seq->Restore(prompt);
}

}  // namespace
}  // namespace clover::bench

int main(int argc, char** argv) {
  using namespace clover::bench;
  BenchModel bench;
  const clover::Status setup = LoadBenchModel(kPrompt, &bench);
  if (setup.ok()) {
    benchmark::RegisterBenchmark("BM_ArStep", BM_ArStep, &bench)->Unit(benchmark::kMillisecond);
    const std::pair<const char*, void (*)(benchmark::State&, BenchModel*)> rounds[] = {
        {"BM_DraftPass", BM_DraftPass},
        {"BM_VerifyPass", BM_VerifyPass},
        {"BM_FusedRound", BM_FusedRound},
        {"BM_Rollback", BM_Rollback}};
    for (const auto& [name, fn] : rounds) {
      benchmark::RegisterBenchmark(name, fn, &bench)
          ->Arg(2)
          ->Arg(4)
          ->Arg(8)
          ->Arg(16)
          ->Unit(benchmark::kMillisecond);
    }
  }
  return RunBenchmarks("speculative_bench", setup, argc, argv);
}
