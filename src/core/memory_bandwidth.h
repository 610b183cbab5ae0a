// Memory bandwidth as STREAM's triad measures it, on the engine's thread pool, so that decode
// speed can be compared with what the memory can deliver to the same threads.
#pragma once

#include <cstdint>
#include <memory>

#include "core/thread_pool.h"

namespace clover {

// Does a[i] = b[i] + s * c[i] for i in [0, n), split over `pool` in the same contiguous ranges
// every call (so each thread touches the pages it first wrote).
void Triad(ThreadPool& pool, double* a, const double* b, const double* c, double s, int64_t n);

struct TriadBandwidth {
  double bytes_per_second = 0;  // best pass
  uint64_t array_bytes = 0;     // each of the three arrays
  int threads = 0;
};

// Three arrays of doubles kept between measurements, so a triad can be taken right before each
// timed run it is compared with (a VM's bandwidth moves between seconds, not only between runs).
// Counts 3 arrays per pass (2 read, 1 written) as STREAM does, without the write-allocate read of
// `a`. Arrays must be well above the last-level cache for the figure to be a DRAM rate.
class TriadArrays {
 public:
  // Allocates `array_bytes` (rounded down to whole doubles) per array, first touched in parallel
  // on `pool`, then runs one untimed pass.
  TriadArrays(ThreadPool& pool, uint64_t array_bytes);

  // The best of `reps` timed passes.
  TriadBandwidth Measure(int reps);

 private:
  ThreadPool& pool_;
  int64_t n_;
  std::unique_ptr<double[]> a_, b_, c_;
};

// TriadArrays(pool, array_bytes).Measure(reps): the arrays are freed on return.
TriadBandwidth MeasureTriadBandwidth(ThreadPool& pool, uint64_t array_bytes, int reps);

}  // namespace clover
