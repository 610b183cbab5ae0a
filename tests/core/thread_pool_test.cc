// ThreadPool: ranges cover [0, n) exactly once, for many sizes and pool sizes, and a slow thread's
// share is taken over by the others.
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

namespace clover {
namespace {

TEST(ThreadPoolTest, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {1, 2, 7, 64, 1001}) {
      for (int64_t min_chunk : {1, 5, 100}) {
        std::vector<std::atomic<int>> hits(n);
        pool.ParallelFor(
            n,
            [&](int64_t b, int64_t e) {
              ASSERT_LT(b, e);
              for (int64_t i = b; i < e; ++i) hits[i]++;
            },
            min_chunk);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
      }
    }
  }
}

// Tasks: one index per call (a one-thread pool runs them inline as one range), every index once,
// and a stalled task holds up no other (with two threads and 8 tasks, ParallelFor's parts would be
// pairs and its partner would wait with it).
TEST(ThreadPoolTest, TasksRunOneIndexEachAndPassAStalledOne) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 8, 33}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelTasks(n, [&](int64_t b, int64_t e) {
        if (threads > 1) ASSERT_EQ(e, b + 1);
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
    }
  }
  ThreadPool pool(2);
  constexpr int64_t n = 8;
  std::vector<std::thread::id> ran_by(n);
  std::vector<int> start_order(n);
  std::atomic<int> started{0};
  pool.ParallelTasks(n, [&](int64_t b, int64_t) {
    start_order[b] = started++;
    ran_by[b] = std::this_thread::get_id();
    if (b == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  for (int64_t i = 1; i < n; ++i) {
    if (start_order[i] > start_order[0]) EXPECT_NE(ran_by[i], ran_by[0]) << i;
  }
}

TEST(ThreadPoolTest, SplitsWorkAcrossCalls) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int rep = 0; rep < 200; ++rep) {
    pool.ParallelFor(100, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum += i;
    });
  }
  EXPECT_EQ(sum.load(), 200 * 4950);
}

// A thread held up in a part (a descheduled vCPU) must not keep the rest of the range waiting:
// every part started after the stall began runs on another thread. (Which thread stalls is not
// fixed: a worker that finishes its own parts first may take part 0 before the caller does.)
TEST(ThreadPoolTest, OtherThreadsTakeOverAStalledThreadsParts) {
  ThreadPool pool(2);
  constexpr int64_t n = 2 * ThreadPool::kPartsPerThread;
  std::vector<std::thread::id> ran_by(n);
  std::vector<int> start_order(n);
  std::atomic<int> started{0};
  pool.ParallelFor(n, [&](int64_t b, int64_t e) {
    ASSERT_EQ(e, b + 1);
    start_order[b] = started++;
    ran_by[b] = std::this_thread::get_id();
    if (b == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  for (int64_t i = 1; i < n; ++i) {
    if (start_order[i] > start_order[0]) EXPECT_NE(ran_by[i], ran_by[0]) << i;
  }
}

// Jobs must reach workers that just finished one and workers long asleep, and a pool must shut
// down from both.
TEST(ThreadPoolTest, WakesBusyAndIdleWorkers) {
  for (int pause_us : {0, 10, 200, 5000}) {
    ThreadPool pool(3);
    std::atomic<int64_t> sum{0};
    for (int rep = 0; rep < 5; ++rep) {
      std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
      pool.ParallelFor(30, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) sum += i;
      });
    }
    EXPECT_EQ(sum.load(), 5 * 435) << pause_us;
    std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
  }
}

// A share that outlasts the caller's spin: the caller must sleep and still be woken by the last
// worker.
TEST(ThreadPoolTest, WaitsForSharesLongerThanTheSpin) {
  ThreadPool pool(3);
  std::atomic<int> done{0};
  for (int rep = 0; rep < 3; ++rep) {
    pool.ParallelFor(3, [&](int64_t b, int64_t) {
      if (b > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ++done;
    });
    EXPECT_EQ(done.load(), 3 * (rep + 1));
  }
}

// Workers poll only briefly after a job: an idle pool must not keep burning CPU.
TEST(ThreadPoolTest, IdleWorkersSleep) {
  const auto cpu_seconds = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(2, [&](int64_t b, int64_t e) { sum += e - b; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double before = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // A worker spinning through the whole wait would add 0.2 s.
  EXPECT_LT(cpu_seconds() - before, 0.05);
  EXPECT_EQ(sum.load(), 2);
}

TEST(ThreadPoolTest, ZeroItemsCallsNothing) {
  ThreadPool pool(2);
  bool called = false;
  pool.ParallelFor(0, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// MoeForward shares one single-thread pool among the workers of another pool: each call must run
// the whole range inline on its own thread.
TEST(ThreadPoolTest, OneThreadPoolRunsInlineOnEveryCaller) {
  ThreadPool serial(1);
  std::atomic<int> inline_calls{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        const std::thread::id caller = std::this_thread::get_id();
        serial.ParallelFor(10, [&](int64_t b, int64_t e) {
          if (b == 0 && e == 10 && std::this_thread::get_id() == caller) ++inline_calls;
        });
      }
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(inline_calls.load(), 400);
}

}  // namespace
}  // namespace clover
