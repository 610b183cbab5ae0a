// Memory bandwidth as STREAM's triad measures it, on the engine's thread pool, so that decode
// speed can be compared with what the memory can deliver to the same threads.
#pragma once

#include <cstdint>

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

// Returns the best of `reps` triad passes over three arrays of `array_bytes` bytes of doubles
// (first touched in parallel, then one untimed pass). Counts 3 arrays per pass (2 read, 1
// written) as STREAM does, without the write-allocate read of `a`. Arrays must be well above the
// last-level cache for the figure to be a DRAM rate.
TriadBandwidth MeasureTriadBandwidth(ThreadPool& pool, uint64_t array_bytes, int reps);

}  // namespace clover
