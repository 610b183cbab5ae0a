// Scheduler: N generation slots over one model, a bounded wait queue, and one worker thread that
// steps every active request's decoder together (decode::BatchRunner), so the passes of requests
// in flight share each forward.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "decode/batch_runner.h"
#include "decode/decoder.h"
#include "model/model.h"
#include "server/metrics.h"

namespace clover::server {

using Clock = std::chrono::steady_clock;

// What the worker reports to a request's handler.
struct JobEvent {
  bool done = false;
  decode::StepEvents step;  // !done: one Consume()'s output
  // done: the end of the generation (status Ok also when cancelled; see result.cancelled).
  Status status;
  decode::GenerateResult result;
};

// One request's generation: its decoder and the channel the worker reports on. Shared between
// the handler thread and the worker.
class Job {
 public:
  Job(std::unique_ptr<decode::Decoder> decoder, int64_t prompt_tokens, Clock::time_point arrival)
      : decoder_(std::move(decoder)), prompt_tokens_(prompt_tokens), arrival_(arrival) {}

  // Waits until events are queued or `timeout` passes; returns them (empty on timeout).
  std::vector<JobEvent> Wait(std::chrono::milliseconds timeout);
  // Asks the worker to stop this generation before its next pass (client gone, shutdown).
  void Cancel() { cancel_ = true; }

  decode::Decoder& decoder() { return *decoder_; }
  int64_t prompt_tokens() const { return prompt_tokens_; }
  Clock::time_point arrival() const { return arrival_; }
  bool cancel_requested() const { return cancel_.load(); }
  void Push(JobEvent event);

 private:
  std::unique_ptr<decode::Decoder> decoder_;
  const int64_t prompt_tokens_;
  const Clock::time_point arrival_;
  std::atomic<bool> cancel_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<JobEvent> events_;
  bool first_token_seen_ = false;  // worker side only

  friend class Scheduler;
};

class Scheduler {
 public:
  // `model` and `metrics` must outlive the scheduler. Starts the worker thread.
  Scheduler(const model::Model& model, int slots, int queue_capacity, Metrics* metrics);
  ~Scheduler();  // Shutdown()

  // Queues `job`; false when the queue is full or the scheduler is shutting down.
  bool Submit(std::shared_ptr<Job> job);
  // Stops taking jobs; queued and active ones get until `grace` to finish (queued ones start as
  // slots free up) and are cancelled then. Joins the worker.
  void Shutdown(std::chrono::milliseconds grace = std::chrono::milliseconds(0));

 private:
  void WorkerLoop();
  void PublishQueue();  // metrics_ gauges; caller holds mu_

  const int slots_;
  const size_t queue_capacity_;
  Metrics* metrics_;
  decode::BatchRunner runner_;  // worker thread only

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::map<decode::BatchRunner::SequenceId, std::shared_ptr<Job>> active_;
  bool stopping_ = false;
  Clock::time_point cancel_deadline_ = Clock::time_point::max();
  std::thread worker_;
};

}  // namespace clover::server
