// Microbenchmarks of the CUDA kernels at Qwen3.6-35B-A3B shapes: matmul per weight type at 1
// (decode) and 32 (preview block) rows, the delta-rule scan, attention and the greedy-confidence
// reduction. Device time per call from CUDA events (manual time); `GB/s` counts the bytes a call
// must read or write at least, to compare with the HBM bandwidth.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "core/dtype.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/delta_rule.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/low_confidence.h"
#include "kernels/cuda/matmul.h"
#include "kernels/quantize.h"

namespace clover::kernels::cuda {
namespace {

std::vector<float> Random(int64_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// The process's device, or null (the benchmark is then skipped).
Device* BenchDevice() {
  static Result<std::unique_ptr<Device>> device = Device::Open();
  return device.ok() ? device->get() : nullptr;
}

// Copies `values` to the device; null on error (reported through `state`).
template <typename T>
std::unique_ptr<DeviceBuffer> Upload(benchmark::State& state, Device& device,
                                     const std::vector<T>& values) {
  Result<DeviceBuffer> buffer = UploadSpan(device, std::span<const T>(values), "bench data");
  if (!buffer.ok()) {
    state.SkipWithError(buffer.status().ToString().c_str());
    return nullptr;
  }
  return std::make_unique<DeviceBuffer>(std::move(buffer).value());
}

// Runs `launch` once per iteration, timed on the device's stream with CUDA events.
template <typename Launch>
void TimeOnDevice(benchmark::State& state, Device& device, Launch launch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  Status warmup = launch();  // first call pays for cuBLAS heuristics and module loading
  if (warmup.ok()) warmup = device.Synchronize();
  if (!warmup.ok()) state.SkipWithError(warmup.ToString().c_str());
  for (auto _ : state) {
    if (!warmup.ok()) break;
    cudaEventRecord(start, device.stream());
    const Status status = launch();
    cudaEventRecord(stop, device.stream());
    cudaEventSynchronize(stop);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

void SetBandwidth(benchmark::State& state, double bytes_per_call) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_per_call / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

constexpr DType kMatMulDTypes[] = {DType::kF32, DType::kBF16, DType::kQ8_0};

// Args: dtype (index into kMatMulDTypes), rows, out, in.
void BM_CudaMatMul(benchmark::State& state) {
  Device* device = BenchDevice();
  if (!device) return state.SkipWithError("no CUDA device");
  const DType dtype = kMatMulDTypes[state.range(0)];
  const int64_t rows = state.range(1), out = state.range(2), in = state.range(3);
  const int64_t row_bytes = static_cast<int64_t>(*DTypeBytes(dtype, in));
  const std::vector<float> wf = Random(out * in, 1);
  std::vector<uint8_t> wq(out * row_bytes);
  for (int64_t o = 0; o < out; ++o)
    (void)QuantizeRow(dtype, wf.data() + o * in, in, wq.data() + o * row_bytes);
  auto w = Upload(state, *device, wq);
  auto x = Upload(state, *device, Random(rows * in, 2));
  auto y = Upload(state, *device, std::vector<float>(rows * out));
  if (!w || !x || !y) return;
  const DeviceMatrix wm{dtype, w->data(), out, in, row_bytes};
  TimeOnDevice(state, *device,
               [&] { return MatMul(*device, x->as<float>(), rows, in, wm, y->as<float>(), out); });
  SetBandwidth(state, double(out) * row_bytes + 4.0 * rows * (in + out));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2e-9 * rows * out * in, benchmark::Counter::kIsIterationInvariantRate);
}
// The GDN input projection of Qwen3.6 (q, k, v, z: 12288 x 2048).
BENCHMARK(BM_CudaMatMul)
    ->ArgsProduct({{0, 1, 2}, {1, 32}, {12288}, {2048}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Args: rows (tokens). Qwen3.6 GDN: 16 k-heads, 32 v-heads of 128.
void BM_CudaDeltaRule(benchmark::State& state) {
  Device* device = BenchDevice();
  if (!device) return state.SkipWithError("no CUDA device");
  const int hk = 16, hv = 32, dk = 128, dv = 128;
  const int64_t rows = state.range(0);
  auto q = Upload(state, *device, Random(rows * hk * dk, 1, -0.1f, 0.1f));
  auto k = Upload(state, *device, Random(rows * hk * dk, 2, -0.1f, 0.1f));
  auto v = Upload(state, *device, Random(rows * hv * dv, 3));
  auto g = Upload(state, *device, Random(rows * hv, 4, -1.0f, -0.05f));
  auto beta = Upload(state, *device, Random(rows * hv, 5, 0.05f, 1.0f));
  auto s = Upload(state, *device, Random(int64_t{hv} * dk * dv, 6));
  auto o = Upload(state, *device, std::vector<float>(rows * hv * dv));
  if (!q || !k || !v || !g || !beta || !s || !o) return;
  DeltaRuleArgs a;
  a.hk = hk, a.hv = hv, a.dk = dk, a.dv = dv, a.n_rows = rows;
  a.q = q->as<float>(), a.k = k->as<float>(), a.v = v->as<float>();
  a.qk_stride = hk * dk, a.v_stride = hv * dv;
  a.g = g->as<float>(), a.beta = beta->as<float>(), a.gate_stride = hv;
  a.state = s->as<float>(), a.out = o->as<float>(), a.out_stride = hv * dv;
  TimeOnDevice(state, *device, [&] { return DeltaRuleRecurrent(*device, a); });
  SetBandwidth(state, 2.0 * 4 * hv * dk * dv + 4.0 * rows * (2 * hk * dk + 2 * hv * dv));
}
BENCHMARK(BM_CudaDeltaRule)->Arg(1)->Arg(32)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Args: rows, positions, mask (0 causal, 1 prefix block). Qwen3.6 attention: 16 query heads,
// 2 kv heads of 256.
void BM_CudaAttention(benchmark::State& state) {
  Device* device = BenchDevice();
  if (!device) return state.SkipWithError("no CUDA device");
  const int n_head = 16, n_head_kv = 2, head_dim = 256;
  const int64_t rows = state.range(0), n_pos = state.range(1);
  const int64_t q_width = n_head * head_dim, kv_width = n_head_kv * head_dim;
  auto q = Upload(state, *device, Random(rows * q_width, 1));
  auto k = Upload(state, *device, Random(n_pos * kv_width, 2));
  auto v = Upload(state, *device, Random(n_pos * kv_width, 3));
  auto out = Upload(state, *device, std::vector<float>(rows * q_width));
  if (!q || !k || !v || !out) return;
  const AttentionParams params{n_head, n_head_kv, head_dim, 1.0f / 16.0f,
                               state.range(2) ? MaskMode::kPrefixBlock : MaskMode::kCausal};
  TimeOnDevice(state, *device, [&] {
    return Attention(*device, params, q->as<float>(), q_width, rows, n_pos - rows,
                     DeviceKv{k->as<float>(), v->as<float>(), kv_width, n_pos}, out->as<float>(),
                     q_width);
  });
  SetBandwidth(state, 2.0 * 4 * n_pos * kv_width + 2.0 * 4 * rows * q_width);
}
BENCHMARK(BM_CudaAttention)
    ->Args({1, 4096, 0})
    ->Args({32, 4096, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Args: rows. Qwen3.6's vocabulary of 248320.
void BM_CudaGreedyConfidence(benchmark::State& state) {
  Device* device = BenchDevice();
  if (!device) return state.SkipWithError("no CUDA device");
  const int64_t rows = state.range(0), vocab = 248320;
  auto logits = Upload(state, *device, Random(rows * vocab, 1, -10.0f, 10.0f));
  auto token = Upload(state, *device, std::vector<int32_t>(rows));
  auto conf = Upload(state, *device, std::vector<double>(rows));
  if (!logits || !token || !conf) return;
  TimeOnDevice(state, *device, [&] {
    return GreedyConfidence(*device, logits->as<float>(), rows, vocab, vocab, vocab - 1,
                            token->as<int32_t>(), conf->as<double>());
  });
  SetBandwidth(state, 4.0 * rows * vocab);
}
BENCHMARK(BM_CudaGreedyConfidence)->Arg(1)->Arg(32)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace clover::kernels::cuda

BENCHMARK_MAIN();
