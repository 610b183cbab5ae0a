// ThreadPool: generation-counted wake-up of persistent workers; every thread, the caller too,
// runs its own run of parts in order, then takes what is left of the others'.
#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace clover {
namespace {

// How long a worker polls for the next job, and a caller for its workers, before sleeping. Long
// enough to span the serial work between two parallel regions of a forward pass (norms, routing,
// attention on one thread), short enough that an idle engine stops burning a core at once.
constexpr auto kSpin = std::chrono::microseconds(200);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Polls `ready` until it returns true or kSpin has passed; returns its last value.
template <typename Ready>
bool SpinUntil(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0)
    n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  n_threads_ = n_threads;
  cursors_ = std::make_unique<PartCursor[]>(static_cast<size_t>(n_threads_));
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunParts(int index) {
  for (int k = 0; k < n_threads_; ++k) {
    PartCursor& cursor = cursors_[(index + k) % n_threads_];
    for (;;) {
      const int part = cursor.next.fetch_add(1, std::memory_order_relaxed);
      if (part >= cursor.end) break;
      const int64_t begin = n_ * part / n_parts_;
      const int64_t end = n_ * (part + 1) / n_parts_;
      if (begin < end) (*fn_)(begin, end);
    }
  }
}

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    // The acquire loads pair with the release increment in ParallelFor: a new generation seen
    // while spinning comes with the job fields written before it.
    const auto signalled = [&] {
      return stop_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    if (!SpinUntil(signalled)) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, signalled);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    RunParts(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // Under the mutex, so the notify cannot fall between the caller's check and its sleep.
      std::lock_guard<std::mutex> lock(mu_);
      done_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                             int64_t min_chunk) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  const int64_t by_chunk = (n + min_chunk - 1) / min_chunk;
  Run(n, fn, static_cast<int>(std::min<int64_t>(int64_t{n_threads_} * kPartsPerThread, by_chunk)));
}

void ThreadPool::ParallelTasks(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  // Parts are ints; beyond this many a part holds several tasks again.
  constexpr int64_t kMaxParts = 1 << 20;
  Run(n, fn, static_cast<int>(std::min(n, kMaxParts)));
}

void ThreadPool::Run(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int parts) {
  if (n_threads_ == 1 || parts <= 1) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    n_parts_ = parts;
    for (int t = 0; t < n_threads_; ++t) {
      cursors_[t].next.store(parts * t / n_threads_, std::memory_order_relaxed);
      cursors_[t].end = parts * (t + 1) / n_threads_;
    }
    pending_.store(n_threads_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  RunParts(0);
  const auto finished = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(finished)) {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, finished);
  }
  fn_ = nullptr;
}

}  // namespace clover
