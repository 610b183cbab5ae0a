// Tests of LowConfidence selection and the block EOS rule.
#include "decode/low_confidence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace clover::decode {
namespace {

std::vector<RowCandidate> Candidates(const std::vector<double>& conf) {
  std::vector<RowCandidate> c;
  for (size_t i = 0; i < conf.size(); ++i) c.push_back({static_cast<int>(i) + 1, 7, conf[i]});
  return c;
}

TEST(LowConfidence, FixesEveryRowStrictlyAboveTau) {
  const auto c = Candidates({0.95, 0.5, 0.91, 0.9});
  EXPECT_EQ(SelectLowConfidence(c, 0.9), (std::vector<size_t>{0, 2}));
}

TEST(LowConfidence, ElseTheSingleMostConfidentLeftmostOnTies) {
  const auto c = Candidates({0.3, 0.6, 0.2, 0.6});
  EXPECT_EQ(SelectLowConfidence(c, 0.95), (std::vector<size_t>{1}));
}

TEST(LowConfidence, TauAtMostZeroFixesAllAndAboveOneFixesOne) {
  const auto c = Candidates({0.0, 1.0, 0.4});
  EXPECT_EQ(SelectLowConfidence(c, 0.0), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(SelectLowConfidence(c, -1.0), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(SelectLowConfidence(c, 1.01), (std::vector<size_t>{1}));
  EXPECT_TRUE(SelectLowConfidence({}, 0.5).empty());
}

TEST(Frontier, StrideRowsAboveTheFloorJoinTheLowConfidenceSet) {
  // 8 masked rows, pass 0 of target 8: stride ceil(8 / 8) = 1 -> the top row only.
  const auto c = Candidates({0.96, 0.8, 0.75, 0.3, 0.72, 0.1, 0.97, 0.2});
  EXPECT_EQ(SelectFrontier(c, 0.95, 0, 0.7, 8, 16), (std::vector<size_t>{0, 6}));
  // pass 6: remaining 2, stride 4 -> the top 4 (0.97, 0.96, 0.8, 0.75), all above 0.7.
  EXPECT_EQ(SelectFrontier(c, 0.95, 6, 0.7, 8, 16), (std::vector<size_t>{0, 1, 2, 6}));
  // pass >= target: remaining 1, stride = all 8, but the floor keeps rows under 0.7 out.
  EXPECT_EQ(SelectFrontier(c, 0.95, 20, 0.7, 8, 16), (std::vector<size_t>{0, 1, 2, 4, 6}));
  // max_stride clamps the stride.
  EXPECT_EQ(SelectFrontier(c, 0.95, 20, 0.7, 8, 2), (std::vector<size_t>{0, 6}));
}

TEST(Frontier, NeverBelowTheFloorExceptTheMinOneRule) {
  const auto c = Candidates({0.3, 0.6, 0.2, 0.6});
  EXPECT_EQ(SelectFrontier(c, 0.95, 7, 0.7, 8, 16), (std::vector<size_t>{1}));
  EXPECT_TRUE(SelectFrontier({}, 0.95, 0, 0.7, 8, 16).empty());
  // Random blocks: a superset of LowConfidence; everything else it adds is >= the floor.
  uint64_t x = 12345;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> conf;
    for (int i = 0; i < 1 + trial % 32; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      conf.push_back(static_cast<double>(x >> 11) / 9007199254740992.0);
    }
    const auto cand = Candidates(conf);
    const auto lc = SelectLowConfidence(cand, 0.95);
    const auto fr = SelectFrontier(cand, 0.95, trial % 10, 0.7, 8, 16);
    for (size_t i : lc) {
      if (cand[i].confidence > 0.95) EXPECT_NE(std::find(fr.begin(), fr.end(), i), fr.end());
    }
    for (size_t i : fr) {
      if (fr.size() > 1) EXPECT_GE(cand[i].confidence, 0.7 - 1e-12) << "trial " << trial;
    }
  }
}

constexpr int32_t kEos = 9;

std::vector<BlockRow> Rows(const std::vector<int32_t>& tokens) {  // -1 = masked
  std::vector<BlockRow> r;
  for (int32_t t : tokens) r.push_back(t < 0 ? BlockRow{} : BlockRow{RowState::kFixed, t});
  return r;
}

TEST(BlockEnd, ResolvedWhenAllRowsAreFixed) {
  const std::vector<int32_t> stops = {kEos};
  const BlockEnd e = EvaluateBlockEnd(Rows({1, 2, 3, 4}), stops, 4);
  EXPECT_TRUE(e.resolved);
  EXPECT_EQ(e.length, 4);
  EXPECT_FALSE(e.stopped);
  EXPECT_FALSE(EvaluateBlockEnd(Rows({1, -1, 3, 4}), stops, 4).resolved);
}

TEST(BlockEnd, EosEndsTheBlockOnceEveryRowLeftOfItIsFixed) {
  const std::vector<int32_t> stops = {kEos};
  EXPECT_FALSE(EvaluateBlockEnd(Rows({1, -1, kEos, -1}), stops, 4).resolved);
  const BlockEnd e = EvaluateBlockEnd(Rows({1, 2, kEos, -1}), stops, 4);
  EXPECT_TRUE(e.resolved);
  EXPECT_EQ(e.length, 3);
  EXPECT_TRUE(e.stopped);
  // The first EOS counts even when a later one is fixed too; rows after it are discarded.
  const BlockEnd f = EvaluateBlockEnd(Rows({kEos, 5, kEos, 6}), stops, 4);
  EXPECT_EQ(f.length, 1);
}

TEST(BlockEnd, AnEosRightOfAMaskedRowWaits) {
  const std::vector<int32_t> stops = {kEos, 8};
  EXPECT_FALSE(EvaluateBlockEnd(Rows({-1, 8, -1, -1}), stops, 4).resolved);
  const BlockEnd e = EvaluateBlockEnd(Rows({3, 8, -1, -1}), stops, 4);
  EXPECT_TRUE(e.resolved);
  EXPECT_EQ(e.length, 2);
}

TEST(BlockEnd, ABudgetShorterThanTheBlockResolvesOnItsRows) {
  const std::vector<int32_t> stops = {kEos};
  const BlockEnd e = EvaluateBlockEnd(Rows({1, 2, -1, -1}), stops, 2);
  EXPECT_TRUE(e.resolved);
  EXPECT_EQ(e.length, 2);
  EXPECT_FALSE(e.stopped);
  // An EOS beyond the budget is never emitted.
  const BlockEnd f = EvaluateBlockEnd(Rows({1, 2, kEos, -1}), stops, 2);
  EXPECT_EQ(f.length, 2);
  EXPECT_FALSE(f.stopped);
  EXPECT_FALSE(EvaluateBlockEnd(Rows({1, -1, 3, 4}), stops, 2).resolved);
}

}  // namespace
}  // namespace clover::decode
