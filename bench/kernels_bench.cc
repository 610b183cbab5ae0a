// Microbenchmarks of the hot CPU kernels per ISA: matmul per weight type (decode GEMV and
// prefill GEMM shapes), attention over a long cache, and the delta rule (recurrent and chunked).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/delta_rule.h"
#include "kernels/kernel_table.h"
#include "kernels/matmul.h"
#include "kernels/quantize.h"

namespace clover::kernels {
namespace {

std::vector<float> Random(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// The dtypes a matmul benchmark can take, by index.
constexpr DType kBenchDTypes[] = {DType::kF32,  DType::kBF16, DType::kF16,
                                  DType::kQ8_0, DType::kQ4_K, DType::kQ6_K};

// Args: isa, dtype (index into kBenchDTypes), rows, out, in, threads.
void BM_MatMul(benchmark::State& state) {
  const Isa isa = static_cast<Isa>(state.range(0));
  if (!IsaSupported(isa, DetectCpuFeatures())) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const DType dtype = kBenchDTypes[state.range(1)];
  const int64_t rows = state.range(2), out = state.range(3), in = state.range(4);
  ThreadPool pool(static_cast<int>(state.range(5)));
  KernelContext ctx{pool, GetKernelTable(isa)};
  const std::vector<float> wf = Random(out * in, 1);
  const uint64_t row_bytes = *DTypeBytes(dtype, in);
  std::vector<uint8_t> wq(out * row_bytes);
  for (int64_t o = 0; o < out; ++o)
    (void)QuantizeRow(dtype, wf.data() + o * in, in, wq.data() + o * row_bytes);
  TensorView w;
  w.dtype = dtype;
  w.shape = {out, in};
  w.data = wq.data();
  w.nbytes = wq.size();
  const std::vector<float> x = Random(rows * in, 2);
  std::vector<float> y(rows * out);
  for (auto _ : state) {
    MatMul(ctx, x.data(), rows, in, w, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * rows * out * in, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(w.nbytes),
                                              benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

void MatMulArgs(benchmark::internal::Benchmark* b) {
  for (int isa : {0, 1, 2})
    for (int dtype : {0, 1, 3, 4, 5})
      for (int rows : {1, 64})
        for (int threads : {1, 2}) b->Args({isa, dtype, rows, 4096, 1024, threads});
}
BENCHMARK(BM_MatMul)->Apply(MatMulArgs)->UseRealTime();

// Args: isa, n_positions; one decode row, 16 heads, 2 kv heads, head_dim 256.
void BM_AttentionDecode(benchmark::State& state) {
  const Isa isa = static_cast<Isa>(state.range(0));
  if (!IsaSupported(isa, DetectCpuFeatures())) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const int64_t n_pos = state.range(1), page = 256, kv_dim = 512;
  ThreadPool pool(1);
  KernelContext ctx{pool, GetKernelTable(isa)};
  const int64_t n_pages = (n_pos + page - 1) / page;
  std::vector<std::vector<float>> pages;
  std::vector<const float*> kp, vp;
  for (int64_t p = 0; p < n_pages; ++p) pages.push_back(Random(page * kv_dim, p));
  for (auto& p : pages) {
    kp.push_back(p.data());
    vp.push_back(p.data());
  }
  KvPagesView kv{kp.data(), vp.data(), page, kv_dim, n_pos};
  AttentionParams params{16, 2, 256, 1.0f / 16, MaskMode::kCausal};
  const std::vector<float> q = Random(16 * 256, 3);
  std::vector<float> out(16 * 256);
  for (auto _ : state) {
    Attention(ctx, params, q.data(), 16 * 256, 1, n_pos - 1, kv, out.data(), 16 * 256);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_AttentionDecode)->ArgsProduct({{0, 2}, {512, 4096}})->UseRealTime();

// Args: isa, chunked (0/1), rows; 16 k-heads, 32 v-heads, dk = dv = 128 (the 35B layer).
void BM_DeltaRule(benchmark::State& state) {
  const Isa isa = static_cast<Isa>(state.range(0));
  if (!IsaSupported(isa, DetectCpuFeatures())) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const int64_t T = state.range(2);
  const int hk = 16, hv = 32, d = 128;
  ThreadPool pool(1);
  KernelContext ctx{pool, GetKernelTable(isa)};
  std::vector<float> q = Random(T * hk * d, 1), k = Random(T * hk * d, 2),
                     v = Random(T * hv * d, 3);
  for (float& x : q) x *= 0.01f;
  for (float& x : k) x *= 0.08f;
  std::vector<float> g(T * hv, -0.1f), beta(T * hv, 0.5f), st(hv * d * d, 0.0f), out(T * hv * d);
  DeltaRuleArgs a;
  a.hk = hk;
  a.hv = hv;
  a.dk = d;
  a.dv = d;
  a.n_rows = T;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.qk_stride = hk * d;
  a.v_stride = hv * d;
  a.g = g.data();
  a.beta = beta.data();
  a.gate_stride = hv;
  a.state = st.data();
  a.out = out.data();
  a.out_stride = hv * d;
  for (auto _ : state) {
    if (state.range(1))
      DeltaRuleChunked(ctx, a);
    else
      DeltaRuleRecurrent(ctx, a);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["tok/s"] =
      benchmark::Counter(static_cast<double>(T), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DeltaRule)->ArgsProduct({{0, 2}, {0, 1}, {1, 64}})->UseRealTime();

}  // namespace
}  // namespace clover::kernels

BENCHMARK_MAIN();
