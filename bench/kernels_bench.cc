// Microbenchmarks of the hot CPU kernels per ISA: matmul per weight type (decode GEMV and
// prefill GEMM shapes), attention over a long cache, and the delta rule (recurrent and chunked).
#include <benchmark/benchmark.h>

#include <random>
#include <utility>
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

// A random [out, in] matrix of `dtype` and the bytes it points at.
struct BenchWeight {
  std::vector<uint8_t> bytes;
  TensorView view;
};

BenchWeight MakeWeight(DType dtype, int64_t out, int64_t in) {
  const std::vector<float> wf = Random(out * in, 1);
  const uint64_t row_bytes = *DTypeBytes(dtype, in);
  BenchWeight w;
  w.bytes.resize(out * row_bytes);
  for (int64_t o = 0; o < out; ++o)
    (void)QuantizeRow(dtype, wf.data() + o * in, in, w.bytes.data() + o * row_bytes);
  w.view.dtype = dtype;
  w.view.shape = {out, in};
  w.view.data = w.bytes.data();
  w.view.nbytes = w.bytes.size();
  return w;
}

// Times MatMul of `rows` random activation rows with `w` and reports GFLOP/s and weight GB/s.
void TimeMatMul(benchmark::State& state, const KernelContext& ctx, const TensorView& w,
                int64_t rows) {
  const int64_t out = w.shape[0], in = w.shape[1];
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

// Args: isa, dtype (index into kBenchDTypes), rows, out, in, threads.
void BM_MatMul(benchmark::State& state) {
  const Isa isa = static_cast<Isa>(state.range(0));
  if (!IsaSupported(isa, DetectCpuFeatures())) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const BenchWeight w = MakeWeight(kBenchDTypes[state.range(1)], state.range(3), state.range(4));
  ThreadPool pool(static_cast<int>(state.range(5)));
  KernelContext ctx{pool, GetKernelTable(isa)};
  TimeMatMul(state, ctx, w.view, state.range(2));
}

void MatMulArgs(benchmark::internal::Benchmark* b) {
  for (int isa : {0, 1, 2})
    for (int dtype : {0, 1, 3, 4, 5})
      for (int rows : {1, 64})
        for (int threads : {1, 2}) b->Args({isa, dtype, rows, 4096, 1024, threads});
}
BENCHMARK(BM_MatMul)->Apply(MatMulArgs)->UseRealTime();

// The AVX-512 quantized product with and without the many-row kernel (quant_gemm), in one run.
// Args: dtype (index into kBenchDTypes), gemm (0: quant_matmul only, 1: as MatMul picks), rows,
// out, in, threads.
void BM_QuantGemm(benchmark::State& state) {
  if (!IsaSupported(Isa::kAvx512, DetectCpuFeatures())) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const BenchWeight w = MakeWeight(kBenchDTypes[state.range(0)], state.range(3), state.range(4));
  KernelTable table = GetKernelTable(Isa::kAvx512);
  if (state.range(1) == 0)
    for (QuantMatMulFn& fn : table.quant_gemm) fn = nullptr;
  ThreadPool pool(static_cast<int>(state.range(5)));
  KernelContext ctx{pool, table};
  TimeMatMul(state, ctx, w.view, state.range(2));
}

// The 1024 x 4096 projection of the matmul benchmark, and the expert shapes of the 35B MoE:
// gate/up (512 out x 2048 in) and down (2048 x 512); 4 and 8 rows bracket MatMul's threshold.
void QuantGemmArgs(benchmark::internal::Benchmark* b) {
  for (int dtype : {3, 4, 5})
    for (int rows : {4, 8, 16, 64, 512})
      for (auto [out, in] : {std::pair{4096, 1024}, std::pair{512, 2048}, std::pair{2048, 512}})
        for (int threads : {1, 2})
          for (int gemm : {0, 1}) b->Args({dtype, gemm, rows, out, in, threads});
}
BENCHMARK(BM_QuantGemm)->Apply(QuantGemmArgs)->UseRealTime();

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
