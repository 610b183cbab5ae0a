// Prometheus rendering: counters, gauges and cumulative histogram buckets.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace clover::server {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(MetricsTest, RendersCountersGaugesAndHistograms) {
  Metrics m(4);
  m.CountRequest("/v1/chat/completions", 200);
  m.CountRequest("/v1/chat/completions", 200);
  m.CountRequest("/v1/chat/completions", 400);
  m.CountGeneration(10, 30, 12, 2);
  m.CountGeneration(5, 6, 3, 1);
  m.SetQueue(3, 2);
  m.ObserveTimeToFirstToken(0.02);
  m.ObserveTimeToFirstToken(0.3);
  m.ObserveRequestDuration(200.0);
  const std::string t = "\n" + m.RenderPrometheus();
  EXPECT_TRUE(Has(t, R"(clover_requests_total{endpoint="/v1/chat/completions",status="200"} 2)"));
  EXPECT_TRUE(Has(t, R"(clover_requests_total{endpoint="/v1/chat/completions",status="400"} 1)"));
  EXPECT_TRUE(Has(t, "clover_prompt_tokens_total 15"));
  EXPECT_TRUE(Has(t, "clover_completion_tokens_total 36"));
  EXPECT_TRUE(Has(t, "clover_passes_total 15"));
  EXPECT_TRUE(Has(t, "clover_blocks_total 3"));
  EXPECT_TRUE(Has(t, "clover_tokens_per_pass 2.4"));
  EXPECT_TRUE(Has(t, "clover_queue_depth 3"));
  EXPECT_TRUE(Has(t, "clover_active_slots 2"));
  EXPECT_TRUE(Has(t, "clover_slots 4"));
  EXPECT_TRUE(Has(t, R"(clover_time_to_first_token_seconds_bucket{le="0.01"} 0)"));
  EXPECT_TRUE(Has(t, R"(clover_time_to_first_token_seconds_bucket{le="0.025"} 1)"));
  EXPECT_TRUE(Has(t, R"(clover_time_to_first_token_seconds_bucket{le="0.5"} 2)"));
  EXPECT_TRUE(Has(t, R"(clover_time_to_first_token_seconds_bucket{le="+Inf"} 2)"));
  EXPECT_TRUE(Has(t, "clover_time_to_first_token_seconds_count 2"));
  EXPECT_TRUE(Has(t, R"(clover_request_duration_seconds_bucket{le="120"} 0)"));
  EXPECT_TRUE(Has(t, R"(clover_request_duration_seconds_bucket{le="+Inf"} 1)"));
  EXPECT_TRUE(Has(t, "# TYPE clover_request_duration_seconds histogram"));
}

}  // namespace
}  // namespace clover::server
