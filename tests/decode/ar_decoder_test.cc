// Tests of the AR decoder against fake models: the causal continuation, stop ids/strings,
// max_tokens, kept sessions, the thinking/answer stop push and parity with diffusion.
#include "decode/ar_decoder.h"

#include <gtest/gtest.h>

#include "decode/registry.h"
#include "decoder_fixture.h"

namespace clover::decode::testing {
namespace {

std::unique_ptr<Decoder> Make(const DecodeRequest& r, const DecodeModelInfo& m,
                              TokenTextFn text = TokenText) {
  auto d = CreateDecoder(r, m, std::move(text));
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? std::move(d).value() : nullptr;
}

DecodeRequest Ar(int prompt_len, int64_t max_tokens) {
  DecodeRequest r;
  r.kind = DecoderKind::kAr;
  r.prompt = Prompt(prompt_len);
  r.max_tokens = max_tokens;
  return r;
}

std::vector<int32_t> Targets(int64_t from, int64_t n) {
  std::vector<int32_t> t;
  for (int64_t q = from; q < from + n; ++q) t.push_back(Target(q));
  return t;
}

TEST(Ar, FollowsTheCausalArgmaxOneTokenPerPass) {
  auto d = Make(Ar(5, 12), ModelInfo());
  const auto g = d->NextGroups();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].tokens, Prompt(5));
  EXPECT_EQ(g[0].logit_rows, (std::vector<int>{4}));
  auto t = Drive(*d, Oracle(false));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->emitted, Targets(5, 12));
  EXPECT_EQ(t->finish, FinishReason::kLength);
  EXPECT_TRUE(t->previews.empty());
  EXPECT_EQ(d->counters().ar_passes, 11);  // the last token is never appended
  EXPECT_EQ(d->counters().tokens, 12);
  EXPECT_EQ(t->state.size(), 5u + 11u);
  EXPECT_EQ(CheckInvariants(*t, kMask), "");
}

TEST(Ar, MatchesDiffusionOnAShiftedOracle) {
  // With shift_logits both decoders read the same causal predictions: identical output.
  auto ar = Drive(*Make(Ar(7, 20), ModelInfo(true)), Oracle(true));
  DecodeRequest r = Ar(7, 20);
  r.kind = DecoderKind::kDiffusion;
  r.block_size = 8;
  auto diff = Drive(*Make(r, ModelInfo(true)), Oracle(true));
  ASSERT_TRUE(ar.ok() && diff.ok());
  EXPECT_EQ(ar->emitted, diff->emitted);
}

TEST(Ar, StopIdEndsTheAnswerWithoutText) {
  auto target = [](int64_t q) { return q == 9 ? kEos : Target(q); };
  auto d = Make(Ar(5, 100), ModelInfo());
  auto t = Drive(*d, Oracle(false, target));
  ASSERT_TRUE(t.ok());
  std::vector<int32_t> want = Targets(5, 4);
  want.push_back(kEos);
  EXPECT_EQ(t->emitted, want);
  EXPECT_EQ(t->finish, FinishReason::kStop);
  EXPECT_EQ(t->text.find("<2>"), std::string::npos);
  EXPECT_EQ(t->state.size(), 9u);
}

TEST(Ar, KeptSessionAppendsTheFinalToken) {
  auto target = [](int64_t q) { return q == 9 ? kEos : Target(q); };
  DecodeRequest r = Ar(5, 100);
  r.keep_session = true;
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, Oracle(false, target));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->state.size(), 10u);
  EXPECT_EQ(t->state.back(), kEos);
  EXPECT_TRUE(t->appends.back().size() == 1);
}

TEST(Ar, StopStringAcrossTokens) {
  auto text = [](int32_t t) -> std::string {
    return t == Target(7) ? "a</" : t == Target(8) ? "s>b" : "x";
  };
  DecodeRequest r = Ar(5, 100);
  r.stop_strings = {"</s>"};
  auto d = Make(r, ModelInfo(), text);
  auto t = Drive(*d, Oracle(false));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->text, "xxa");
  EXPECT_EQ(t->emitted.size(), 4u);
  EXPECT_EQ(t->finish, FinishReason::kStop);
}

TEST(Ar, ThinkEndThenEosArePushedAtTheirStarts) {
  DecodeRequest r = Ar(5, 100);
  r.thinking = true;
  r.stop_push = StopPushParams{
      .enabled = true, .think_start = 2, .eos_start = 3, .window = 1, .max_bias = 100.0f};
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, Oracle(false));
  ASSERT_TRUE(t.ok());
  // Thinking tokens 0, 1, then </think> at thinking index 2; answer tokens 0..2, then EOS.
  const std::vector<int32_t> want = {Target(5), Target(6),  kThinkEnd, Target(8),
                                     Target(9), Target(10), kEos};
  EXPECT_EQ(t->emitted, want);
}

TEST(Ar, RepetitionPenaltyCoversThePrompt) {
  FakeModel f;
  f.vocab = kVocab;
  auto row = [](auto...) {
    std::vector<float> l(kVocab, 0.0f);
    l[4] = 5.0f;  // a prompt id
    l[20] = 4.0f;
    return l;
  };
  f.causal = row;
  f.preview = row;
  DecodeRequest r = Ar(5, 3);
  r.penalties.repetition = 1.5f;
  auto t = Drive(*Make(r, ModelInfo()), f);
  ASSERT_TRUE(t.ok());
  // 5 / 1.5 < 4 picks 20; once generated, 20 is penalised too (4 / 1.5 < 5 / 1.5, once per id).
  EXPECT_EQ(t->emitted, (std::vector<int32_t>{20, 4, 4}));
}

TEST(Ar, RejectsWrongLogitsAndUseAfterFinish) {
  auto d = Make(Ar(3, 1), ModelInfo());
  const std::vector<float> two_rows(2 * kVocab, 0.0f);
  EXPECT_EQ(d->Consume(two_rows).status().code(), StatusCode::kInvalidArgument);
  const std::vector<float> one_row = OracleRow(20, 3.0f);
  auto ev = d->Consume(one_row);
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->tokens, std::vector<int32_t>{20});
  EXPECT_TRUE(d->finished());
  EXPECT_EQ(d->Consume(one_row).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(CreateDecoder(Ar(3, 1), ModelInfo(), nullptr).ok());
}

}  // namespace
}  // namespace clover::decode::testing
