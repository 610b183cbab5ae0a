// Microbenchmarks of the hot CPU kernels per ISA: matmul per weight type (decode GEMV and
// prefill GEMM shapes), attention over a long cache, and the delta rule (recurrent and chunked).
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/memory_bandwidth.h"
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

// The quantized product with and without the many-row kernels (quant_gemm), in one run.
// Args: dtype (index into kBenchDTypes), kernel (0: the avx512 one-row quant_matmul only, 1: the
// avx512 table as MatMul picks, 2: the amx table as MatMul picks, 3 and 4: as 0 and 1 for avx2),
// rows, out, in, threads.
void BM_QuantGemm(benchmark::State& state) {
  static constexpr Isa kKernelIsa[] = {Isa::kAvx512, Isa::kAvx512, Isa::kAmx, Isa::kAvx2,
                                       Isa::kAvx2};
  const Isa isa = kKernelIsa[state.range(1)];
  if (!IsaSupported(isa, DetectCpuFeatures())) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const BenchWeight w = MakeWeight(kBenchDTypes[state.range(0)], state.range(3), state.range(4));
  KernelTable table = GetKernelTable(isa);
  if (state.range(1) == 0 || state.range(1) == 3)
    for (QuantMatMulFn& fn : table.quant_gemm) fn = nullptr;
  ThreadPool pool(static_cast<int>(state.range(5)));
  KernelContext ctx{pool, table};
  TimeMatMul(state, ctx, w.view, state.range(2));
}

// The 1024 x 4096 projection of the matmul benchmark, the expert shapes of the 35B MoE: gate/up
// (512 out x 2048 in) and down (2048 x 512), and a 16384-row slice of the 2048-wide output head;
// 4 and 8 rows bracket MatMul's threshold.
void QuantGemmArgs(benchmark::internal::Benchmark* b) {
  for (int dtype : {3, 4, 5})
    for (int rows : {2, 3, 4, 8, 16, 24, 32, 64, 512})
      for (auto [out, in] : {std::pair{4096, 1024}, std::pair{512, 2048}, std::pair{2048, 512},
                             std::pair{16384, 2048}})
        for (int threads : {1, 2})
          for (int kernel : {0, 1, 2, 3, 4}) b->Args({dtype, kernel, rows, out, in, threads});
}
BENCHMARK(BM_QuantGemm)->Apply(QuantGemmArgs)->UseRealTime();

// The best STREAM triad of `threads` threads in this process, measured once per thread count.
double TriadBytesPerSecond(ThreadPool& pool, int threads) {
  static std::map<int, double> measured;
  auto [it, inserted] = measured.try_emplace(threads, 0.0);
  if (inserted) it->second = MeasureTriadBandwidth(pool, 128ull << 20, 5).bytes_per_second;
  return it->second;
}

// Huge-page-backed bytes, as the engine's weight mappings are (MappedFile asks for THP), so that
// TLB misses do not count against the kernel here when they would not in the engine.
struct HugePageBuffer {
  explicit HugePageBuffer(size_t n) : bytes(n) {
    data = static_cast<uint8_t*>(
        mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (data == MAP_FAILED) std::abort();
    madvise(data, n, MADV_HUGEPAGE);
  }
  ~HugePageBuffer() { munmap(data, bytes); }
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  uint8_t* data;
  size_t bytes;
};

// One activation row against `copies` copies of a weight matrix, each iteration the next copy.
// `of_triad` compares the weight bytes per second with the triad of the same threads, measured in
// the same process. Args: dtype (index into kBenchDTypes), out, in, threads.
void RunMatVec(benchmark::State& state, bool from_memory) {
  const DType dtype = kBenchDTypes[state.range(0)];
  const int64_t out = state.range(1), in = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const BenchWeight w = MakeWeight(dtype, out, in);
  const size_t matrix_bytes = w.bytes.size();
  const size_t copies = from_memory ? std::max<size_t>(2, (512ull << 20) / matrix_bytes) : 1;
  HugePageBuffer buffer(copies * matrix_bytes);
  for (size_t c = 0; c < copies; ++c)
    std::memcpy(buffer.data + c * matrix_bytes, w.bytes.data(), matrix_bytes);
  const Result<const KernelTable*> table = SelectKernelTable();
  if (!table.ok()) {
    state.SkipWithError(table.status().ToString().c_str());
    return;
  }
  ThreadPool pool(threads);
  KernelContext ctx{pool, **table};
  const double triad = TriadBytesPerSecond(pool, threads);
  const std::vector<float> x = Random(in, 2);
  std::vector<float> y(out);
  TensorView view = w.view;
  size_t next = 0;
  for (auto _ : state) {
    view.data = buffer.data + next * matrix_bytes;
    next = (next + 1) % copies;
    MatMul(ctx, x.data(), 1, in, view, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(matrix_bytes),
                                              benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.counters["triad_GB/s"] = triad / 1e9;
  state.counters["of_triad"] = benchmark::Counter(static_cast<double>(matrix_bytes) / triad,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

// As in a decode step: copies of the matrix fill 512 MiB, so every iteration reads it from DRAM;
// of_triad is the fraction of the bandwidth limit the kernel reaches on its own.
void BM_MatVecFromMemory(benchmark::State& state) { RunMatVec(state, true); }

// The same matrix every iteration, from the caches where it fits (512 x 2048 at 4-6 bits is
// 0.6-0.8 MB): the kernel's own rate, which bounds what it can stream from DRAM.
void BM_MatVecInCache(benchmark::State& state) { RunMatVec(state, false); }

// The decode shapes of the 35B at Q4_K_M: an expert's gate/up (512 x 2048, Q4_K) and down
// (2048 x 512, Q6_K), an attention/GDN projection (4096 x 2048), the head's rows (16384 x 2048).
void MatVecFromMemoryArgs(benchmark::internal::Benchmark* b) {
  for (int dtype : {3, 4, 5})
    for (auto [out, in] : {std::pair{512, 2048}, std::pair{2048, 512}, std::pair{4096, 2048},
                           std::pair{16384, 2048}})
      for (int threads : {1, 2}) b->Args({dtype, out, in, threads});
}
BENCHMARK(BM_MatVecFromMemory)->Apply(MatVecFromMemoryArgs)->UseRealTime();
BENCHMARK(BM_MatVecInCache)->Apply(MatVecFromMemoryArgs)->UseRealTime();

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
BENCHMARK(BM_DeltaRule)->ArgsProduct({{0, 2, 3}, {0, 1}, {1, 64, 512}})->UseRealTime();

}  // namespace
}  // namespace clover::kernels

BENCHMARK_MAIN();
