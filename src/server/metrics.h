// Server metrics in Prometheus' text exposition format (GET /metrics).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace clover::server {

// A cumulative histogram with fixed upper bounds (seconds).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Appends the _bucket/_sum/_count lines of `name`.
  void Render(const std::string& name, std::string* out) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bound, not cumulative; +1 for +Inf
  double sum_ = 0.0;
  uint64_t count_ = 0;
};

// Counters and gauges of one server; every method is thread-safe.
class Metrics {
 public:
  explicit Metrics(int slots);

  void CountRequest(const std::string& endpoint, int status);
  // A generation that ended (finished, cancelled or failed) with its token and pass counts.
  void CountGeneration(int64_t prompt_tokens, int64_t completion_tokens, int64_t passes,
                       int64_t blocks);
  void ObserveTimeToFirstToken(double seconds);
  void ObserveRequestDuration(double seconds);
  void SetQueue(int64_t queued, int64_t active);

  std::string RenderPrometheus() const;

 private:
  mutable std::mutex mu_;
  const int slots_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  uint64_t prompt_tokens_ = 0, completion_tokens_ = 0, passes_ = 0, blocks_ = 0;
  int64_t queued_ = 0, active_ = 0;
  Histogram ttft_, duration_;
};

}  // namespace clover::server
