// Model::TruncateAppend: a captured append cut back to k rows leaves the state that appending
// only those k rows would have (the rollback of a speculative verify, clover-decoding.md §9.2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/forward_test_util.h"
#include "model/random_weights.h"

namespace clover::model {
namespace {

using testing::Engine;
using testing::RandomIds;
using testing::Logits;
using testing::MaxRelDiff;

// The truncated state was built by the chunked scan + a token-by-token replay, the reference by
// one chunked or recurrent scan: equal up to f32 summation order (~1e-6 relative); a wrong row
// count or conv window moves logits by O(1).
constexpr double kTolerance = 2e-5;
// The conv rows are projections of different row counts (a 7-row matmul vs 1-row ones): the
// AVX2 kernels sum them in another order, 10 ulps apart at |x| ~ 1 (AVX-512 happened to agree
// to 1e-6 absolute).
constexpr float kStateTolerance = 4e-6f;

class AppendCaptureTest : public ::testing::Test {
 protected:
  AppendCaptureTest()
      : config_(RandomModelConfig("tiny").value()),
        weights_(MakeRandomWeights(config_, 11, DType::kF32)),
        engine_(weights_) {}

  ModelConfig config_;
  ModelWeights weights_;
  Engine engine_;
};

TEST_F(AppendCaptureTest, TruncatedStateEqualsAppendingTheKeptRowsOnly) {
  const std::vector<int32_t> prompt = RandomIds(9, config_.vocab_size, 1);
  const std::vector<int32_t> verify = RandomIds(7, config_.vocab_size, 2);  // spans 2 conv windows
  const std::vector<int32_t> next = RandomIds(3, config_.vocab_size, 3);
  for (int64_t keep = 0; keep <= static_cast<int64_t>(verify.size()); ++keep) {
    SCOPED_TRACE("keep " + std::to_string(keep));
    SequenceState cut = engine_.model->NewSequence();
    engine_.Append(cut, prompt);
    AppendCapture capture;
    engine_.Append(cut, verify, &capture);
    ASSERT_TRUE(engine_.model->TruncateAppend(cut, capture, keep).ok());
    EXPECT_EQ(cut.length(), static_cast<int64_t>(prompt.size()) + keep);

    SequenceState ref = engine_.model->NewSequence();
    engine_.Append(ref, prompt);
    // One token at a time, as an AR decode would have built it.
    for (int64_t i = 0; i < keep; ++i) engine_.Append(ref, {verify[i]});
    for (int il = 0; il < config_.n_layers; ++il) {
      if (config_.layer_kinds[il] != LayerKind::kGatedDeltaNet) continue;
      const int64_t conv_n = int64_t{config_.conv_kernel - 1} * config_.conv_dim();
      for (int64_t i = 0; i < conv_n; ++i)
        ASSERT_NEAR(cut.conv_state(il)[i], ref.conv_state(il)[i],
                    kStateTolerance * std::max(1.0f, std::abs(ref.conv_state(il)[i])))
            << "layer " << il;
      const int64_t rec_n = int64_t{config_.hv} * config_.dk * config_.dv;
      for (int64_t i = 0; i < rec_n; ++i)
        ASSERT_NEAR(cut.recurrent_state(il)[i], ref.recurrent_state(il)[i], 1e-5) << "layer " << il;
    }
    // What comes after sees the kept rows only, in attention layers too.
    EXPECT_LT(MaxRelDiff(engine_.Append(cut, next), engine_.Append(ref, next)), kTolerance);
  }
}

TEST_F(AppendCaptureTest, KeepingEveryRowChangesNothing) {
  const std::vector<int32_t> prompt = RandomIds(5, config_.vocab_size, 4);
  const std::vector<int32_t> verify = RandomIds(4, config_.vocab_size, 5);
  SequenceState cut = engine_.model->NewSequence();
  SequenceState ref = engine_.model->NewSequence();
  engine_.Append(cut, prompt);
  engine_.Append(ref, prompt);
  AppendCapture capture;
  const Logits captured = engine_.Append(cut, verify, &capture);
  EXPECT_EQ(captured, engine_.Append(ref, verify));  // capturing does not change the pass
  ASSERT_TRUE(engine_.model->TruncateAppend(cut, capture, 4).ok());
  const std::vector<int32_t> next = {1, 2};
  EXPECT_EQ(engine_.Append(cut, next), engine_.Append(ref, next));
}

TEST_F(AppendCaptureTest, RejectsAStaleCaptureOrAnOutOfRangeKeep) {
  SequenceState seq = engine_.model->NewSequence();
  engine_.Append(seq, RandomIds(4, config_.vocab_size, 6));
  AppendCapture capture;
  engine_.Append(seq, RandomIds(3, config_.vocab_size, 7), &capture);
  Status s = engine_.model->TruncateAppend(seq, capture, 4);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("keep_rows 4 is outside [0, 3]"), std::string::npos) << s.message();
  EXPECT_EQ(engine_.model->TruncateAppend(seq, capture, -1).code(), StatusCode::kInvalidArgument);

  engine_.Append(seq, {1});  // the capture no longer ends the sequence
  s = engine_.model->TruncateAppend(seq, capture, 1);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("last append"), std::string::npos) << s.message();

  SequenceState other = engine_.model->NewSequence();
  EXPECT_EQ(engine_.model->TruncateAppend(other, capture, 1).code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace clover::model
