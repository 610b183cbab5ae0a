// Tests of greedy choice, the per-request RNG and seeded sampling filters.
#include "decode/sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace clover::decode {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

TEST(Greedy, TiesGoToTheLowestIdAndProbIsTheSoftmax) {
  const std::vector<float> l = {1.0f, 3.0f, 3.0f, -2.0f};
  auto c = ChooseGreedy(l);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->token, 1);
  const double z = std::exp(1.0) + 2 * std::exp(3.0) + std::exp(-2.0);
  EXPECT_NEAR(c->prob, std::exp(3.0) / z, 1e-12);
}

TEST(Greedy, MaskedEntriesAreExcludedFromTheChoiceAndTheSoftmax) {
  const std::vector<float> l = {kNegInf, 2.0f, kNegInf, 2.0f};
  auto c = ChooseGreedy(l);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->token, 1);
  EXPECT_DOUBLE_EQ(c->prob, 0.5);
}

TEST(Greedy, HugeLogitsDoNotOverflow) {
  const std::vector<float> l = {1e30f, 1e30f - 1e24f, 0.0f};
  auto c = ChooseGreedy(l);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->token, 0);
  EXPECT_DOUBLE_EQ(c->prob, 1.0);
}

TEST(Greedy, AllMaskedIsAnError) {
  const std::vector<float> l = {kNegInf, kNegInf};
  auto c = ChooseGreedy(l);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
}

TEST(Rng, UniformIsTheTop53BitsOfMt19937_64) {
  Rng rng(5489);  // the standard's default seed: first output 14514284786278117030
  EXPECT_DOUBLE_EQ(rng.NextUniform(),
                   static_cast<double>(14514284786278117030ull >> 11) * std::ldexp(1.0, -53));
  Rng a(7), b(7);
  for (int i = 0; i < 100; ++i) {
    const double u = a.NextUniform();
    EXPECT_EQ(u, b.NextUniform());
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

// Returns the empirical distribution of `n` draws.
std::vector<double> Histogram(const std::vector<float>& l, const SamplingParams& p, int n) {
  Rng rng(p.seed);
  std::vector<std::pair<double, int32_t>> scratch;
  std::vector<double> h(l.size(), 0.0);
  for (int i = 0; i < n; ++i) {
    auto c = ChooseSampled(l, p, rng, scratch);
    EXPECT_TRUE(c.ok());
    h[static_cast<size_t>(c->token)] += 1.0 / n;
  }
  return h;
}

std::vector<float> LogProbs(const std::vector<double>& p) {
  std::vector<float> l;
  for (double x : p) l.push_back(static_cast<float>(std::log(x)));
  return l;
}

TEST(Sampled, FollowsTheTemperatureScaledDistribution) {
  const std::vector<float> l = LogProbs({0.5, 0.3, 0.2});
  SamplingParams p{.temperature = 1.0f, .seed = 11};
  const auto h = Histogram(l, p, 40000);
  EXPECT_NEAR(h[0], 0.5, 0.01);
  EXPECT_NEAR(h[1], 0.3, 0.01);
  EXPECT_NEAR(h[2], 0.2, 0.01);
  p.temperature = 0.5f;  // p^2 renormalised: 25/38, 9/38, 4/38
  const auto c = Histogram(l, p, 40000);
  EXPECT_NEAR(c[0], 25.0 / 38, 0.01);
  EXPECT_NEAR(c[2], 4.0 / 38, 0.01);
}

TEST(Sampled, ReturnsTheProbabilityUnderTheFilteredDistribution) {
  const std::vector<float> l = LogProbs({0.5, 0.3, 0.15, 0.05});
  SamplingParams p{.temperature = 1.0f, .top_p = 0.75f, .seed = 3};
  Rng rng(p.seed);
  std::vector<std::pair<double, int32_t>> scratch;
  for (int i = 0; i < 200; ++i) {
    auto c = ChooseSampled(l, p, rng, scratch);
    ASSERT_TRUE(c.ok());
    ASSERT_LT(c->token, 2);  // nucleus {0, 1}: 0.5 < 0.75 <= 0.8
    EXPECT_NEAR(c->prob, c->token == 0 ? 0.5 / 0.8 : 0.3 / 0.8, 1e-6);
  }
}

TEST(Sampled, TopKOneIsGreedy) {
  const std::vector<float> l = {0.1f, 0.7f, 0.7f, 0.2f};
  SamplingParams p{.temperature = 1.5f, .top_k = 1, .seed = 1};
  Rng rng(1);
  std::vector<std::pair<double, int32_t>> scratch;
  for (int i = 0; i < 20; ++i) {
    auto c = ChooseSampled(l, p, rng, scratch);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->token, 1);
    EXPECT_DOUBLE_EQ(c->prob, 1.0);
  }
}

TEST(Sampled, MinPKeepsTokensAboveTheFractionOfTheMax) {
  const std::vector<float> l = LogProbs({0.5, 0.3, 0.15, 0.05});
  SamplingParams p{.temperature = 1.0f, .min_p = 0.5f, .seed = 5};  // keep p >= 0.25
  const auto h = Histogram(l, p, 20000);
  EXPECT_EQ(h[2] + h[3], 0.0);
  EXPECT_NEAR(h[0], 0.5 / 0.8, 0.015);
}

TEST(Sampled, NucleusOverALargeFlatVocabularyKeepsTheLowestIds) {
  // 1000 equal logits: the nucleus of 0.5 is the first 500 ids (ties -> lower id), which needs
  // the sorted prefix to grow past its first 64 entries.
  const std::vector<float> l(1000, 0.0f);
  SamplingParams p{.temperature = 1.0f, .top_p = 0.5f, .seed = 9};
  Rng rng(9);
  std::vector<std::pair<double, int32_t>> scratch;
  int32_t top = 0;
  for (int i = 0; i < 2000; ++i) {
    auto c = ChooseSampled(l, p, rng, scratch);
    ASSERT_TRUE(c.ok());
    top = std::max(top, c->token);
    EXPECT_NEAR(c->prob, 1.0 / 500, 1e-9);
  }
  EXPECT_LT(top, 500);
  EXPECT_GT(top, 400);
}

TEST(Sampled, MaskedIdsAreNeverDrawn) {
  std::vector<float> l(50, 0.0f);
  l[7] = kNegInf;
  l[8] = kNegInf;
  const auto h = Histogram(l, SamplingParams{.temperature = 2.0f, .seed = 2}, 5000);
  EXPECT_EQ(h[7] + h[8], 0.0);
}

TEST(Sampled, SameSeedSameDraws) {
  const std::vector<float> l(64, 0.0f);
  const SamplingParams p{.temperature = 1.0f, .top_p = 0.9f, .top_k = 40, .seed = 1234};
  Rng a(p.seed), b(p.seed), c(p.seed + 1);
  std::vector<std::pair<double, int32_t>> scratch;
  int differ = 0;
  for (int i = 0; i < 50; ++i) {
    const int32_t ta = ChooseSampled(l, p, a, scratch)->token;
    EXPECT_EQ(ta, ChooseSampled(l, p, b, scratch)->token);
    differ += ta != ChooseSampled(l, p, c, scratch)->token;
  }
  EXPECT_GT(differ, 10);
}

TEST(SamplingParams, RejectsOutOfRangeValues) {
  EXPECT_TRUE(ValidateSamplingParams({}).ok());
  EXPECT_FALSE(ValidateSamplingParams({.temperature = -1.0f}).ok());
  EXPECT_FALSE(ValidateSamplingParams({.top_p = 0.0f}).ok());
  EXPECT_FALSE(ValidateSamplingParams({.top_p = 1.5f}).ok());
  EXPECT_FALSE(ValidateSamplingParams({.top_k = -2}).ok());
  const Status s = ValidateSamplingParams({.min_p = 2.0f});
  EXPECT_NE(s.message().find("min_p"), std::string::npos);
}

}  // namespace
}  // namespace clover::decode
