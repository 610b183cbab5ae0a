// ThreadPool: one persistent set of worker threads that splits index ranges (passed by reference).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace clover {

// A fixed pool of `size()` threads (the caller counts as one). Not re-entrant: a ParallelFor body
// must not call ParallelFor on the same pool. Create one per engine and pass it down explicitly.
// A pool of one thread runs every ParallelFor inline on the calling thread and touches no shared
// state, so one such pool may serve many threads at once (MoeForward's per-expert tasks).
class ThreadPool {
 public:
  // Starts `n_threads - 1` workers; `n_threads <= 0` means one per hardware thread.
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Returns the number of threads that run a ParallelFor (workers + caller).
  int size() const { return n_threads_; }

  // Calls `fn(begin, end)` on disjoint contiguous ranges covering [0, n), at most one range per
  // thread and none shorter than `min_chunk` (except the last); returns when all are done.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                   int64_t min_chunk = 1);

 private:
  void WorkerLoop(int index);
  void RunShare(int index);

  int n_threads_ = 1;
  std::vector<std::thread> workers_;
  // A worker or a waiting caller first spins on the atomics for a short while and only then
  // sleeps on a condition variable: a decode step runs ~100 parallel regions of 20-300 us, and
  // a futex wake-up of a sleeping thread costs 10-20 us on a VM (docs/design.md).
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<uint64_t> generation_{0};  // written under mu_, read by spinning workers
  std::atomic<int> pending_{0};          // workers still running the current generation
  std::atomic<bool> stop_{false};
  // The job of the current generation.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int n_parts_ = 0;
};

}  // namespace clover
