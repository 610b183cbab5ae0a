#include "server/metrics.h"

#include <charconv>

namespace clover::server {
namespace {

// Shortest text that reads back as `v`.
std::string Num(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

void Header(std::string* out, const char* name, const char* type, const char* help) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void Sample(std::string* out, const std::string& name, double v) { *out += name + " " + Num(v) + "\n"; }

const std::vector<double> kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                            1,     2.5,  5,     10,   30,  60,   120};

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Render(const std::string& name, std::string* out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    *out += name + "_bucket{le=\"" + Num(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  *out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  Sample(out, name + "_sum", sum_);
  *out += name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics(int slots) : slots_(slots), ttft_(kLatencyBounds), duration_(kLatencyBounds) {}

void Metrics::CountRequest(const std::string& endpoint, int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{endpoint, status}];
}

void Metrics::CountGeneration(int64_t prompt_tokens, int64_t completion_tokens, int64_t passes,
                              int64_t blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  prompt_tokens_ += prompt_tokens;
  completion_tokens_ += completion_tokens;
  passes_ += passes;
  blocks_ += blocks;
}

void Metrics::ObserveTimeToFirstToken(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ttft_.Observe(seconds);
}

void Metrics::ObserveRequestDuration(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  duration_.Observe(seconds);
}

void Metrics::SetQueue(int64_t queued, int64_t active) {
  std::lock_guard<std::mutex> lock(mu_);
  queued_ = queued;
  active_ = active;
}

std::string Metrics::RenderPrometheus() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  Header(&out, "clover_requests_total", "counter", "HTTP requests by endpoint and status.");
  for (const auto& [key, n] : requests_)
    out += "clover_requests_total{endpoint=\"" + key.first + "\",status=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
  Header(&out, "clover_prompt_tokens_total", "counter", "Prompt tokens of finished generations.");
  Sample(&out, "clover_prompt_tokens_total", static_cast<double>(prompt_tokens_));
  Header(&out, "clover_completion_tokens_total", "counter", "Generated tokens.");
  Sample(&out, "clover_completion_tokens_total", static_cast<double>(completion_tokens_));
  Header(&out, "clover_passes_total", "counter", "Decoding passes (forwards after the prefill).");
  Sample(&out, "clover_passes_total", static_cast<double>(passes_));
  Header(&out, "clover_blocks_total", "counter", "Diffusion blocks resolved.");
  Sample(&out, "clover_blocks_total", static_cast<double>(blocks_));
  Header(&out, "clover_tokens_per_pass", "gauge", "Generated tokens per decoding pass since start.");
  Sample(&out, "clover_tokens_per_pass",
         passes_ == 0 ? 0.0 : static_cast<double>(completion_tokens_) / static_cast<double>(passes_));
  Header(&out, "clover_queue_depth", "gauge", "Requests waiting for a slot.");
  Sample(&out, "clover_queue_depth", static_cast<double>(queued_));
  Header(&out, "clover_active_slots", "gauge", "Slots generating now.");
  Sample(&out, "clover_active_slots", static_cast<double>(active_));
  Header(&out, "clover_slots", "gauge", "Slots (--parallel).");
  Sample(&out, "clover_slots", slots_);
  Header(&out, "clover_time_to_first_token_seconds", "histogram",
         "From arrival to the first generated token.");
  ttft_.Render("clover_time_to_first_token_seconds", &out);
  Header(&out, "clover_request_duration_seconds", "histogram", "From arrival to the last byte.");
  duration_.Render("clover_request_duration_seconds", &out);
  return out;
}

}  // namespace clover::server
