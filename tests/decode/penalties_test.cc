// Tests of suppression, presence/frequency/repetition penalties, TokenHistory and the stop push.
#include "decode/penalties.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace clover::decode {
namespace {

TEST(Penalties, PresenceAndFrequencyFollowOpenAi) {
  TokenHistory h;
  h.AddGenerated(1);
  h.AddGenerated(2);
  h.AddGenerated(2);
  h.AddGenerated(2);
  std::vector<float> l = {1.0f, 1.0f, 1.0f, 1.0f};
  h.Apply(l, PenaltyParams{.presence = 0.5f, .frequency = 0.25f});
  EXPECT_FLOAT_EQ(l[0], 1.0f);
  EXPECT_FLOAT_EQ(l[1], 1.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(l[2], 1.0f - 0.5f - 0.75f);
  EXPECT_FLOAT_EQ(l[3], 1.0f);
}

TEST(Penalties, RepetitionDividesPositiveAndMultipliesNegativeOncePerId) {
  TokenHistory h;
  const std::vector<int32_t> prompt = {0, 1, 1};
  h.AddPrompt(prompt);
  h.AddGenerated(1);
  h.AddGenerated(2);
  std::vector<float> l = {2.0f, -2.0f, 3.0f, 5.0f};
  h.Apply(l, PenaltyParams{.repetition = 2.0f});
  EXPECT_FLOAT_EQ(l[0], 1.0f);
  EXPECT_FLOAT_EQ(l[1], -4.0f);
  EXPECT_FLOAT_EQ(l[2], 1.5f);
  EXPECT_FLOAT_EQ(l[3], 5.0f);
}

TEST(Penalties, PromptIdsGetRepetitionButNotPresence) {
  TokenHistory h;
  const std::vector<int32_t> prompt = {0};
  h.AddPrompt(prompt);
  std::vector<float> l = {2.0f, 2.0f};
  h.Apply(l, kCloverReleasePenalties);
  EXPECT_FLOAT_EQ(l[0], 2.0f / 1.05f);
  EXPECT_FLOAT_EQ(l[1], 2.0f);
  h.AddGenerated(0);
  std::vector<float> m = {2.0f, 2.0f};
  h.Apply(m, kCloverReleasePenalties);
  EXPECT_FLOAT_EQ(m[0], 2.0f / 1.05f - 0.9f);  // repetition first, then presence (vLLM order)
}

TEST(TokenHistory, RemoveUndoesAdd) {
  TokenHistory h;
  const std::vector<int32_t> prompt = {3};
  h.AddPrompt(prompt);
  h.AddGenerated(3);
  h.AddGenerated(4);
  h.AddGenerated(4);
  h.RemoveGenerated(4);
  EXPECT_EQ(h.GeneratedCount(4), 1);
  h.RemoveGenerated(4);
  h.RemoveGenerated(3);
  EXPECT_EQ(h.GeneratedCount(4), 0);
  EXPECT_EQ(h.GeneratedCount(3), 0);
  std::vector<float> l = {0, 0, 0, 4.0f, 4.0f};
  h.Apply(l, PenaltyParams{.presence = 1.0f, .repetition = 2.0f});
  EXPECT_FLOAT_EQ(l[3], 2.0f);  // still a prompt id: repetition only
  EXPECT_FLOAT_EQ(l[4], 4.0f);
}

TEST(Penalties, ResolveAppliesCloverDefaultsUnlessOverridden) {
  const PenaltyParams base = ResolvePenalties({}, false);
  EXPECT_EQ(base.presence, 0.0f);
  EXPECT_EQ(base.repetition, 1.0f);
  const PenaltyParams clover = ResolvePenalties({}, true);
  EXPECT_EQ(clover.presence, 0.9f);
  EXPECT_EQ(clover.repetition, 1.05f);
  const PenaltyParams over = ResolvePenalties({.presence = 0.0f}, true);
  EXPECT_EQ(over.presence, 0.0f);
  EXPECT_EQ(over.repetition, 1.05f);
  EXPECT_FALSE(ValidatePenaltyParams({.repetition = 0.0f}).ok());
}

TEST(StopPush, RampsLinearlyFromStartOverTheWindow) {
  const StopPushParams p = kCloverReleaseStopPush;
  EXPECT_EQ(StopPushBias(-1, 4096, p), 0.0f);
  EXPECT_EQ(StopPushBias(4094, 4096, p), 0.0f);
  EXPECT_EQ(StopPushBias(4095, 4096, p), 0.0f);
  EXPECT_FLOAT_EQ(StopPushBias(4096, 4096, p), 10.0f / 1024);
  EXPECT_FLOAT_EQ(StopPushBias(4096 + 511, 4096, p), 5.0f);
  EXPECT_FLOAT_EQ(StopPushBias(4096 + 1023, 4096, p), 10.0f);
  EXPECT_FLOAT_EQ(StopPushBias(100000, 4096, p), 10.0f);
  EXPECT_FALSE(ValidateStopPushParams({.window = 0}).ok());
}

TEST(Suppress, MasksListedIdsAndThePaddedTail) {
  std::vector<float> l(8, 1.0f);
  const std::vector<int32_t> ids = {2, 99};
  SuppressTokens(l, ids, 6);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(std::isinf(l[i]), i == 2 || i >= 6) << i;
}

}  // namespace
}  // namespace clover::decode
