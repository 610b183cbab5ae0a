// ThreadPool: one persistent set of worker threads that share out index ranges (passed by
// reference).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
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

  // Calls `fn(begin, end)` on disjoint contiguous ranges covering [0, n), none shorter than
  // `min_chunk` (except the last), and returns when all are done. [0, n) is cut into up to
  // kPartsPerThread parts per thread; each thread owns a contiguous run of them and works through
  // it in order, then takes the parts the other threads have not reached yet. So a thread may run
  // several ranges, and `fn` must not depend on how [0, n) is cut.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                   int64_t min_chunk = 1);

  // ParallelFor with every index its own part, for a few coarse tasks (MoeForward's one-expert
  // tasks): a thread that falls behind then leaves at most one task for the others to wait on,
  // not one part of several tasks.
  void ParallelTasks(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

  // A VM's vCPUs do not run at one speed: a neighbour's load or a host interrupt slows one of
  // them for a while. With one fixed share per thread the others then wait for it at the end of
  // every region; with several smaller parts they take over its remaining ones. Owned runs (not
  // one shared queue) keep each thread streaming through one contiguous stretch of the weights
  // when all threads keep pace.
  static constexpr int kPartsPerThread = 2;

 private:
  // Runs fn over [0, n) cut into `parts` parts (ParallelFor's contract).
  void Run(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int parts);
  void WorkerLoop(int index);
  void RunParts(int index);

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
  // Thread t's run of parts: the next one not yet taken (by t or a thief) and its end. One cache
  // line each, so taking a part does not disturb the other threads' counters.
  struct alignas(64) PartCursor {
    std::atomic<int> next{0};
    int end = 0;
  };
  std::unique_ptr<PartCursor[]> cursors_;
};

}  // namespace clover
