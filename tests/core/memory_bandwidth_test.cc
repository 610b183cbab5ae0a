// Triad: every element computed once, whatever the split; the measurement reports what it ran.
#include "core/memory_bandwidth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace clover {
namespace {

TEST(MemoryBandwidthTest, TriadComputesEveryElement) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 7, 65537, 200003}) {
      std::vector<double> a(n, -1.0), b(n), c(n);
      for (int64_t i = 0; i < n; ++i) {
        b[i] = static_cast<double>(i);
        c[i] = 0.5 * static_cast<double>(i % 13);
      }
      Triad(pool, a.data(), b.data(), c.data(), 3.0, n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(a[i], b[i] + 3.0 * c[i]) << threads << " " << n << " " << i;
    }
  }
}

TEST(MemoryBandwidthTest, ReportsArraysThreadsAndAFiniteRate) {
  ThreadPool pool(2);
  const TriadBandwidth bw = MeasureTriadBandwidth(pool, (1 << 20) + 12, 2);
  EXPECT_EQ(bw.array_bytes, uint64_t{(1 << 20) + 8});  // whole doubles
  EXPECT_EQ(bw.threads, 2);
  EXPECT_TRUE(std::isfinite(bw.bytes_per_second));
  EXPECT_GT(bw.bytes_per_second, 0.0);
}

TEST(MemoryBandwidthTest, ArraysKeptForRepeatedMeasurements) {
  ThreadPool pool(2);
  TriadArrays arrays(pool, (3 << 20) + 5);
  for (int i = 0; i < 3; ++i) {
    const TriadBandwidth bw = arrays.Measure(1);
    EXPECT_EQ(bw.array_bytes, uint64_t{3 << 20});
    EXPECT_EQ(bw.threads, 2);
    EXPECT_TRUE(std::isfinite(bw.bytes_per_second));
    EXPECT_GT(bw.bytes_per_second, 0.0);
  }
}

}  // namespace
}  // namespace clover
