// STREAM-style triad on a ThreadPool.
#include "core/memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <memory>

namespace clover {
namespace {

// Big enough that splitting a pass costs nothing next to it.
constexpr int64_t kMinChunk = 1 << 16;

}  // namespace

void Triad(ThreadPool& pool, double* a, const double* b, const double* c, double s, int64_t n) {
  pool.ParallelFor(
      n,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
      },
      kMinChunk);
}

TriadBandwidth MeasureTriadBandwidth(ThreadPool& pool, uint64_t array_bytes, int reps) {
  const int64_t n = static_cast<int64_t>(array_bytes / sizeof(double));
  // Not std::vector: its value-initialisation would touch every page on this thread.
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  pool.ParallelFor(
      n,
      [&](int64_t begin, int64_t end) {
        std::fill(a.get() + begin, a.get() + end, 0.0);
        std::fill(b.get() + begin, b.get() + end, 1.0);
        std::fill(c.get() + begin, c.get() + end, 2.0);
      },
      kMinChunk);
  Triad(pool, a.get(), b.get(), c.get(), 3.0, n);
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    Triad(pool, a.get(), b.get(), c.get(), 3.0, n);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  TriadBandwidth out;
  out.array_bytes = static_cast<uint64_t>(n) * sizeof(double);
  out.bytes_per_second = 3.0 * static_cast<double>(out.array_bytes) / best;
  out.threads = pool.size();
  return out;
}

}  // namespace clover
