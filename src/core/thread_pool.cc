// ThreadPool: generation-counted wake-up of persistent workers; the caller runs part 0.
#include "core/thread_pool.h"

#include <algorithm>

namespace clover {

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0)
    n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  n_threads_ = n_threads;
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunShare(int index) {
  if (index >= n_parts_) return;
  const int64_t begin = n_ * index / n_parts_;
  const int64_t end = n_ * (index + 1) / n_parts_;
  if (begin < end) (*fn_)(begin, end);
}

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunShare(index);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                             int64_t min_chunk) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  const int64_t by_chunk = (n + min_chunk - 1) / min_chunk;
  const int parts = static_cast<int>(std::min<int64_t>(n_threads_, by_chunk));
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    n_parts_ = parts;
    pending_ = n_threads_ - 1;
    ++generation_;
  }
  wake_.notify_all();
  RunShare(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
}

}  // namespace clover
