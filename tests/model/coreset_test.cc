// Tests of the block expert coreset on constructed and random routers. The golden clover-tiny
// coreset lists need the model's router inputs and are checked by the preview-pass test.
#include "model/coreset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace clover::model {
namespace {

constexpr int kExperts = 32;

// One router row whose softmax is `top` on the listed experts and the rest spread evenly.
std::vector<float> RouterRow(const std::vector<std::pair<int, double>>& top) {
  double rest = 1.0;
  for (const auto& [e, p] : top) rest -= p;
  std::vector<float> l(kExperts, static_cast<float>(std::log(rest / (kExperts - top.size()))));
  for (const auto& [e, p] : top) l[e] = static_cast<float>(std::log(p));
  return l;
}

// Votes with top-2: e0 1.1, e3 .7, e4 .55, e1 .5, e2 .4, e5 .35 (sum 3.6); cumulative shares
// .306 .5 .653 .792 .903 1: the smallest prefix reaching 0.9 has 5 experts.
std::vector<float> ConstructedRouter() {
  std::vector<float> l;
  for (const auto& row : {RouterRow({{0, 0.6}, {1, 0.3}}), RouterRow({{0, 0.5}, {2, 0.4}}),
                          RouterRow({{3, 0.7}, {1, 0.2}}), RouterRow({{4, 0.55}, {5, 0.35}})})
    l.insert(l.end(), row.begin(), row.end());
  return l;
}

TEST(Coreset, KeepsTheSmallestPrefixReachingTheMass) {
  const auto c =
      ComputeBlockCoreset(ConstructedRouter(), 4, kExperts,
                          {.mass = 0.9f, .min_experts = 3, .vote_topk = 2, .preview_topk = 2});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kept, (std::vector<int32_t>{0, 3, 4, 1, 2}));
  EXPECT_EQ(c->n_by_mass, 5);
  EXPECT_NEAR(c->votes[0], 1.1 / 3.6, 1e-6);
  EXPECT_NEAR(c->votes[5], 0.35 / 3.6, 1e-6);
  EXPECT_EQ(c->votes[6], 0.0);
  EXPECT_NEAR(std::accumulate(c->votes.begin(), c->votes.end(), 0.0), 1.0, 1e-12);
}

TEST(Coreset, TheGuardKeepsAtLeastMinExpertsInVoteOrder) {
  const auto c =
      ComputeBlockCoreset(ConstructedRouter(), 4, kExperts,
                          {.mass = 0.9f, .min_experts = 16, .vote_topk = 2, .preview_topk = 2});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->n_by_mass, 5);
  std::vector<int32_t> want = {0, 3, 4, 1, 2, 5};
  for (int e = 6; e < 16; ++e) want.push_back(e);  // zero votes: ties -> lower id
  EXPECT_EQ(c->kept, want);
}

TEST(Coreset, RowsRePickTheirTopKInsideTheKeptSet) {
  const auto c =
      ComputeBlockCoreset(ConstructedRouter(), 4, kExperts,
                          {.mass = 0.9f, .min_experts = 3, .vote_topk = 2, .preview_topk = 2});
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->picked_per_row, 2);
  EXPECT_EQ(c->row_experts[0], 0);
  EXPECT_EQ(c->row_experts[1], 1);
  EXPECT_NEAR(c->row_weights[0], 0.6 / 0.9, 1e-6);
  EXPECT_NEAR(c->row_weights[1], 0.3 / 0.9, 1e-6);
  // Row 3's second choice (expert 5) is outside the set: it takes the best kept expert instead,
  // a tie of the evenly spread rest resolved to the lowest id.
  const double rest = 0.1 / 30;
  EXPECT_EQ(c->row_experts[6], 4);
  EXPECT_EQ(c->row_experts[7], 0);
  EXPECT_NEAR(c->row_weights[6], 0.55 / (0.55 + rest), 1e-6);
  EXPECT_NEAR(c->row_weights[7], rest / (0.55 + rest), 1e-6);
}

TEST(Coreset, ExactMassIsEnoughAndTiesGoToTheLowerId) {
  const std::vector<float> flat(4, 0.0f);
  const auto c = ComputeBlockCoreset(
      flat, 1, 4, {.mass = 0.5f, .min_experts = 0, .vote_topk = 4, .preview_topk = 1});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kept, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(c->row_experts, (std::vector<int32_t>{0}));
  EXPECT_EQ(c->row_weights, (std::vector<float>{1.0f}));
}

TEST(Coreset, TheGuardIsCappedAtTheExpertCount) {
  const std::vector<float> l = {3.0f, 0.0f, 0.0f, 0.0f};
  const auto c = ComputeBlockCoreset(
      l, 1, 4, {.mass = 0.9f, .min_experts = 16, .vote_topk = 1, .preview_topk = 8});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->n_by_mass, 1);
  EXPECT_EQ(c->kept.size(), 4u);
  EXPECT_EQ(c->picked_per_row, 4);
}

TEST(Coreset, RandomRoutersSatisfyTheDefinition) {
  std::mt19937 gen(42);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  const int rows = 8, n = 64;
  const CoresetParams p{.mass = 0.9f, .min_experts = 16, .vote_topk = 8, .preview_topk = 4};
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> l(rows * n);
    for (float& x : l) x = nd(gen);
    const auto c = ComputeBlockCoreset(l, rows, n, p);
    ASSERT_TRUE(c.ok());
    double before = 0.0;
    for (int k = 0; k + 1 < c->n_by_mass; ++k) before += c->votes[c->kept[k]];
    EXPECT_LT(before, p.mass);
    EXPECT_GE(before + c->votes[c->kept[c->n_by_mass - 1]], p.mass);
    EXPECT_EQ(c->kept.size(), static_cast<size_t>(std::max(c->n_by_mass, 16)));
    for (size_t k = 1; k < c->kept.size(); ++k)
      EXPECT_GE(c->votes[c->kept[k - 1]], c->votes[c->kept[k]]);
    for (int r = 0; r < rows; ++r) {
      // Brute force: the row's best 4 kept experts by raw logit (softmax is monotone).
      std::vector<int32_t> inside = c->kept;
      std::sort(inside.begin(), inside.end(),
                [&](int32_t a, int32_t b) { return l[r * n + a] > l[r * n + b]; });
      float wsum = 0.0f;
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(c->row_experts[r * 4 + k], inside[k]);
        wsum += c->row_weights[r * 4 + k];
      }
      EXPECT_NEAR(wsum, 1.0f, 1e-6f);
    }
  }
}

TEST(Coreset, RejectsBadShapesAndParameters) {
  const std::vector<float> l(10, 0.0f);
  EXPECT_FALSE(ComputeBlockCoreset(l, 2, 4, {}).ok());
  EXPECT_FALSE(ComputeBlockCoreset(l, 2, 5, {.mass = 1.5f}).ok());
  EXPECT_FALSE(ComputeBlockCoreset(l, 2, 5, {.preview_topk = 0}).ok());
  EXPECT_TRUE(ComputeBlockCoreset(l, 2, 5, {}).ok());
}

// The expert budget's later passes: the rows of another block routed inside a stored set pick as
// the coreset of that set would make them pick.
TEST(Coreset, RoutingInsideAStoredSetRePicksLikeTheCoreset) {
  std::mt19937 gen(7);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  const int rows = 6, n = 40;
  const CoresetParams p{.mass = 0.9f, .min_experts = 8, .vote_topk = 4, .preview_topk = 3};
  std::vector<float> refresh(rows * n), later(3 * n);
  for (float& x : refresh) x = nd(gen);
  for (float& x : later) x = nd(gen);
  const auto c = ComputeBlockCoreset(refresh, rows, n, p);
  ASSERT_TRUE(c.ok());
  const auto same = RouteInsideCoreset(refresh, rows, n, c->kept, p.preview_topk);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->picked_per_row, c->picked_per_row);
  EXPECT_EQ(same->row_experts, c->row_experts);
  EXPECT_EQ(same->row_weights, c->row_weights);

  const auto r = RouteInsideCoreset(later, 3, n, c->kept, p.preview_topk);
  ASSERT_TRUE(r.ok());
  for (int row = 0; row < 3; ++row) {
    std::vector<int32_t> inside = c->kept;
    std::sort(inside.begin(), inside.end(),
              [&](int32_t a, int32_t b) { return later[row * n + a] > later[row * n + b]; });
    for (int k = 0; k < 3; ++k) EXPECT_EQ(r->row_experts[row * 3 + k], inside[k]) << row;
  }
}

TEST(Coreset, RoutingInsideASetRejectsBadSets) {
  const std::vector<float> l(10, 0.0f);
  EXPECT_FALSE(RouteInsideCoreset(l, 2, 5, {}, 2).ok());
  const std::vector<int32_t> outside = {1, 5};
  EXPECT_FALSE(RouteInsideCoreset(l, 2, 5, outside, 2).ok());
  const std::vector<int32_t> ok = {4, 1};
  EXPECT_FALSE(RouteInsideCoreset(l, 2, 5, ok, 0).ok());
  const auto r = RouteInsideCoreset(l, 2, 5, ok, 8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->picked_per_row, 2);                                // capped at the set's size
  EXPECT_EQ(r->row_experts, (std::vector<int32_t>{1, 4, 1, 4}));  // ties -> lower id
}

}  // namespace
}  // namespace clover::model
