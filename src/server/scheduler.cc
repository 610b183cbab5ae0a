#include "server/scheduler.h"

namespace clover::server {

void Job::Push(JobEvent event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

std::vector<JobEvent> Job::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return !events_.empty(); });
  std::vector<JobEvent> out(std::make_move_iterator(events_.begin()),
                            std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

Scheduler::Scheduler(const model::Model& model, int slots, int queue_capacity, Metrics* metrics)
    : slots_(slots),
      queue_capacity_(static_cast<size_t>(queue_capacity)),
      metrics_(metrics),
      runner_(model) {
  worker_ = std::thread([this] { WorkerLoop(); });
}

Scheduler::~Scheduler() { Shutdown(); }

bool Scheduler::Submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || queue_.size() >= queue_capacity_ + (slots_ - active_.size())) return false;
    queue_.push_back(std::move(job));
    PublishQueue();
  }
  cv_.notify_all();
  return true;
}

void Scheduler::Shutdown(std::chrono::milliseconds grace) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      cancel_deadline_ = Clock::now() + grace;
    }
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Scheduler::PublishQueue() {
  metrics_->SetQueue(static_cast<int64_t>(queue_.size()), static_cast<int64_t>(active_.size()));
}

void Scheduler::WorkerLoop() {
  while (true) {
    std::vector<std::shared_ptr<Job>> rejected;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Waits with a timeout so that a cancelled queued job (client gone) is noticed while idle.
      cv_.wait_for(lock, std::chrono::milliseconds(50),
                   [this] { return stopping_ || !queue_.empty() || !active_.empty(); });
      if (stopping_) {
        // Accepted requests (a stream may have begun) still run during the grace period; what
        // has not finished by its end is cancelled, queued or not.
        const bool past_deadline = Clock::now() >= cancel_deadline_;
        if (past_deadline) {
          rejected.assign(queue_.begin(), queue_.end());
          queue_.clear();
        }
        if (active_.empty() && queue_.empty()) {
          PublishQueue();
          lock.unlock();
          for (auto& job : rejected) job->Push({.done = true, .result = {.cancelled = true}});
          return;
        }
        if (past_deadline)
          for (auto& [id, job] : active_) job->Cancel();
      }
      for (auto it = queue_.begin(); it != queue_.end();) {
        if ((*it)->cancel_requested()) {
          rejected.push_back(*it);
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
      while (active_.size() < static_cast<size_t>(slots_) && !queue_.empty()) {
        std::shared_ptr<Job> job = std::move(queue_.front());
        queue_.pop_front();
        Job* raw = job.get();
        const auto id = runner_.Add(job->decoder(), [this, raw](const decode::StepEvents& ev) {
          if (!raw->first_token_seen_ && !ev.tokens.empty()) {
            raw->first_token_seen_ = true;
            metrics_->ObserveTimeToFirstToken(
                std::chrono::duration<double>(Clock::now() - raw->arrival()).count());
          }
          raw->Push({.step = ev});
        });
        active_.emplace(id, std::move(job));
      }
      PublishQueue();
    }
    for (auto& job : rejected) job->Push({.done = true, .result = {.cancelled = true}});
    if (runner_.empty()) continue;

    // active_ only changes on this thread, so it can be read without the lock here.
    for (const auto& [id, job] : active_)
      if (job->cancel_requested()) runner_.Cancel(id);
    std::vector<decode::BatchRunner::Done> done = runner_.Step();
    if (done.empty()) continue;
    std::vector<std::shared_ptr<Job>> finished;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& d : done) {
        auto it = active_.find(d.id);
        finished.push_back(std::move(it->second));
        active_.erase(it);
      }
      PublishQueue();
    }
    for (size_t i = 0; i < done.size(); ++i) {
      const decode::DecodeCounters& c = done[i].result.counters;
      metrics_->CountGeneration(finished[i]->prompt_tokens(), c.tokens, c.passes(), c.blocks);
      finished[i]->Push({.done = true, .status = std::move(done[i].status),
                         .result = std::move(done[i].result)});
    }
  }
}

}  // namespace clover::server
