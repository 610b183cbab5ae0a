// STREAM-style triad on a ThreadPool.
#include "core/memory_bandwidth.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

#include "core/cpu_features.h"

namespace clover {
namespace {

// Big enough that splitting a pass costs nothing next to it.
constexpr int64_t kMinChunk = 1 << 16;

void TriadRange(double* a, const double* b, const double* c, double s, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
}

// Four 256-bit vectors of each array an iteration. The baseline build's loop is one 128-bit
// vector an iteration, and how fast that ran depended on where the linker put it: two builds
// whose triad code was the same measured 7-15 % apart on one machine (docs/benchmarks.md). A
// bandwidth figure must not move with code layout, so the loop does not leave the core short
// of instructions in flight.
__attribute__((target("avx2,fma"))) void TriadRangeAvx2(double* a, const double* b, const double* c,
                                                        double s, int64_t begin, int64_t end) {
  const __m256d sv = _mm256_set1_pd(s);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    for (int k = 0; k < 4; ++k) {
      const __m256d r =
          _mm256_fmadd_pd(sv, _mm256_loadu_pd(c + i + 4 * k), _mm256_loadu_pd(b + i + 4 * k));
      _mm256_storeu_pd(a + i + 4 * k, r);
    }
  }
  TriadRange(a, b, c, s, i, end);
}

}  // namespace

void Triad(ThreadPool& pool, double* a, const double* b, const double* c, double s, int64_t n) {
  const CpuFeatures& cpu = DetectCpuFeatures();
  const bool wide = cpu.avx2 && cpu.fma;
  pool.ParallelFor(
      n,
      [&](int64_t begin, int64_t end) {
        if (wide)
          TriadRangeAvx2(a, b, c, s, begin, end);
        else
          TriadRange(a, b, c, s, begin, end);
      },
      kMinChunk);
}

TriadArrays::TriadArrays(ThreadPool& pool, uint64_t array_bytes)
    : pool_(pool),
      n_(static_cast<int64_t>(array_bytes / sizeof(double))),
      // Not std::vector: its value-initialisation would touch every page on this thread.
      a_(new double[n_]),
      b_(new double[n_]),
      c_(new double[n_]) {
  pool_.ParallelFor(
      n_,
      [&](int64_t begin, int64_t end) {
        std::fill(a_.get() + begin, a_.get() + end, 0.0);
        std::fill(b_.get() + begin, b_.get() + end, 1.0);
        std::fill(c_.get() + begin, c_.get() + end, 2.0);
      },
      kMinChunk);
  Triad(pool_, a_.get(), b_.get(), c_.get(), 3.0, n_);
}

TriadBandwidth TriadArrays::Measure(int reps) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    Triad(pool_, a_.get(), b_.get(), c_.get(), 3.0, n_);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  TriadBandwidth out;
  out.array_bytes = static_cast<uint64_t>(n_) * sizeof(double);
  out.bytes_per_second = 3.0 * static_cast<double>(out.array_bytes) / best;
  out.threads = pool_.size();
  return out;
}

TriadBandwidth MeasureTriadBandwidth(ThreadPool& pool, uint64_t array_bytes, int reps) {
  return TriadArrays(pool, array_bytes).Measure(reps);
}

}  // namespace clover
