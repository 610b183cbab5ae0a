// Scheduler shutdown on a random Clover model: accepted requests, running or queued, get the
// grace period; what is left at its end is cancelled.
#include "server/scheduler.h"

#include <gtest/gtest.h>

#include "decode/registry.h"
#include "decode/request.h"
#include "model/forward_test_util.h"
#include "model/random_weights.h"

namespace clover::server {
namespace {

struct Fixture {
  Fixture()
      : cfg(model::RandomModelConfig("clover-tiny").value()),
        weights(model::MakeRandomWeights(cfg, 5, DType::kF32)),
        engine(weights, 1),
        info(decode::DecodeModelInfoFromConfig(cfg, cfg.vocab_size, std::nullopt)) {}

  // An AR job of `max_tokens` tokens that ignores EOS.
  std::shared_ptr<Job> MakeJob(int64_t max_tokens) {
    decode::DecodeRequest r;
    r.kind = decode::DecoderKind::kAr;
    r.prompt = {5, 6, 7, 8};
    r.max_tokens = max_tokens;
    decode::DecodeModelInfo no_eos = info;
    no_eos.eos_ids.clear();
    auto d = decode::CreateDecoder(r, no_eos, [](int32_t) { return std::string("x"); });
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return std::make_shared<Job>(std::move(*d), 4, Clock::now());
  }

  model::ModelConfig cfg;
  model::ModelWeights weights;
  model::testing::Engine engine;
  decode::DecodeModelInfo info;
  Metrics metrics{1};
};

// Returns the job's final event, waiting at most 30 s.
JobEvent Final(Job& job) {
  const auto until = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < until) {
    for (JobEvent& e : job.Wait(std::chrono::milliseconds(50)))
      if (e.done) return e;
  }
  ADD_FAILURE() << "the job did not end";
  return {};
}

TEST(SchedulerTest, QueuedRequestsStillRunDuringTheGracePeriod) {
  Fixture f;
  Scheduler s(*f.engine.model, /*slots=*/1, /*queue_capacity=*/4, &f.metrics);
  std::shared_ptr<Job> running = f.MakeJob(24);
  std::shared_ptr<Job> queued = f.MakeJob(24);
  ASSERT_TRUE(s.Submit(running));
  ASSERT_TRUE(s.Submit(queued));
  s.Shutdown(std::chrono::seconds(60));  // returns once both are done
  for (Job* job : {running.get(), queued.get()}) {
    const JobEvent e = Final(*job);
    EXPECT_TRUE(e.status.ok()) << e.status.ToString();
    EXPECT_FALSE(e.result.cancelled);
    EXPECT_EQ(e.result.finish, decode::FinishReason::kLength);
  }
  EXPECT_FALSE(s.Submit(f.MakeJob(4))) << "no new jobs after the shutdown";
}

TEST(SchedulerTest, WhatIsLeftAtTheEndOfTheGracePeriodIsCancelled) {
  Fixture f;
  Scheduler s(*f.engine.model, /*slots=*/1, /*queue_capacity=*/4, &f.metrics);
  std::shared_ptr<Job> running = f.MakeJob(1'000'000);
  std::shared_ptr<Job> queued = f.MakeJob(1'000'000);
  ASSERT_TRUE(s.Submit(running));
  ASSERT_TRUE(s.Submit(queued));
  s.Shutdown(std::chrono::milliseconds(100));
  for (Job* job : {running.get(), queued.get()}) {
    const JobEvent e = Final(*job);
    EXPECT_TRUE(e.result.cancelled);
    EXPECT_FALSE(e.result.finish.has_value());
  }
}

}  // namespace
}  // namespace clover::server
