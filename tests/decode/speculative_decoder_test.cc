// Tests of the draft-self decoder against fake models: the output is the AR decoder's token for
// token whatever the drafts are (rejections at every draft position, EOS inside a draft, drafts
// longer than the budget, kept sessions, seeded sampling), rejected rows are discarded, the draft
// length adapts, and a fused round is one forward.
#include "decode/speculative_decoder.h"

#include <gtest/gtest.h>

#include "decode/registry.h"
#include "decoder_fixture.h"

namespace clover::decode::testing {
namespace {

std::unique_ptr<Decoder> Make(const DecodeRequest& r, const DecodeModelInfo& m) {
  auto d = CreateDecoder(r, m, TokenText);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? std::move(d).value() : nullptr;
}

DecodeRequest Request(DecoderKind kind, int prompt_len, int64_t max_tokens, bool fused = false) {
  DecodeRequest r;
  r.kind = kind;
  r.prompt = Prompt(prompt_len);
  r.max_tokens = max_tokens;
  r.fuse_commit = fused;
  return r;
}

// The preview's guess for position q: the causal target, except where `wrong(q)` says it errs.
FakeModel DraftingOracle(bool shift, std::function<int32_t(int64_t)> target,
                         std::function<bool(int64_t)> wrong) {
  FakeModel f = Oracle(shift, target);
  f.preview = [=](std::span<const int32_t> ctx, std::span<const int32_t>, int row) {
    const int64_t q = static_cast<int64_t>(ctx.size()) + row + (shift ? 1 : 0);
    const int32_t t = target(q);
    return OracleRow(wrong(q) ? static_cast<int32_t>(10 + (t - 10 + 1) % 40) : t, 10.0f);
  };
  return f;
}

Trace Decode(const DecodeRequest& r, const FakeModel& model, bool shift) {
  auto d = Make(r, ModelInfo(shift));
  auto t = Drive(*d, model);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return Trace{};
  // I3 only: I4/I5 describe a diffusion block's passes, and draft previews are no such block
  // (after a rejection the next draft may start where the last one did, on another prefix).
  Trace mask_check = *t;
  mask_check.previews.clear();
  EXPECT_EQ(CheckInvariants(mask_check, kMask), "");
  return *t;
}

struct Variant {
  bool shift;
  bool fused;
};

class SpeculativeVariants : public ::testing::TestWithParam<Variant> {};

TEST_P(SpeculativeVariants, EqualsArWhereverTheDraftsGoWrong) {
  const auto [shift, fused] = GetParam();
  // Each period puts the first wrong draft at a different index of the round, so rollbacks land
  // on every row of the verify pass (draft lengths 2..16 included).
  for (int period : {1, 2, 3, 5, 7, 11, 17, 1000}) {
    SCOPED_TRACE("period " + std::to_string(period));
    const FakeModel model =
        DraftingOracle(shift, Target, [period](int64_t q) { return q % period == 0; });
    const Trace ar = Decode(Request(DecoderKind::kAr, 6, 60), model, shift);
    const Trace spec = Decode(Request(DecoderKind::kSpeculative, 6, 60, fused), model, shift);
    EXPECT_EQ(spec.emitted, ar.emitted);
    EXPECT_EQ(spec.text, ar.text);
    EXPECT_EQ(spec.finish, ar.finish);
    // AR never appends its last token; the speculative state may hold it as a verified draft.
    ASSERT_GE(spec.state.size(), ar.state.size());
    EXPECT_TRUE(std::equal(ar.state.begin(), ar.state.end(), spec.state.begin()));
    if (period == 1) EXPECT_GT(spec.discarded, 0);
  }
}

TEST_P(SpeculativeVariants, EosInsideADraftStopsThere) {
  const auto [shift, fused] = GetParam();
  auto target = [](int64_t q) { return q == 13 ? kEos : Target(q); };
  const FakeModel model = DraftingOracle(shift, target, [](int64_t) { return false; });
  const Trace ar = Decode(Request(DecoderKind::kAr, 6, 100), model, shift);
  const Trace spec = Decode(Request(DecoderKind::kSpeculative, 6, 100, fused), model, shift);
  ASSERT_EQ(ar.emitted.back(), kEos);
  EXPECT_EQ(spec.emitted, ar.emitted);
  EXPECT_EQ(spec.finish, FinishReason::kStop);
}

TEST_P(SpeculativeVariants, DraftsNeverRunPastMaxTokens) {
  const auto [shift, fused] = GetParam();
  const FakeModel model = DraftingOracle(shift, Target, [](int64_t) { return false; });
  for (int64_t max_tokens : {1, 2, 3, 5, 17}) {
    SCOPED_TRACE("max_tokens " + std::to_string(max_tokens));
    DecodeRequest r = Request(DecoderKind::kSpeculative, 6, max_tokens, fused);
    r.speculative.draft_min = r.speculative.draft_max = 16;
    const Trace spec = Decode(r, model, shift);
    const Trace ar = Decode(Request(DecoderKind::kAr, 6, max_tokens), model, shift);
    EXPECT_EQ(spec.emitted, ar.emitted);
    EXPECT_EQ(spec.finish, FinishReason::kLength);
    // Every drafted row was accepted (the budget clamp left no draft to waste).
    EXPECT_EQ(spec.discarded, 0);
    EXPECT_LE(static_cast<int64_t>(spec.state.size()), 6 + max_tokens);
  }
}

TEST_P(SpeculativeVariants, KeptSessionHoldsEveryEmittedToken) {
  const auto [shift, fused] = GetParam();
  for (int64_t eos_at : {9, 10, 14}) {
    auto target = [eos_at](int64_t q) { return q == eos_at ? kEos : Target(q); };
    const FakeModel model =
        DraftingOracle(shift, target, [](int64_t q) { return q % 4 == 0; });
    DecodeRequest r = Request(DecoderKind::kSpeculative, 6, 100, fused);
    r.keep_session = true;
    const Trace spec = Decode(r, model, shift);
    std::vector<int32_t> want = Prompt(6);
    want.insert(want.end(), spec.emitted.begin(), spec.emitted.end());
    EXPECT_EQ(spec.state, want) << "eos at " << eos_at;
    EXPECT_EQ(spec.emitted.back(), kEos);
  }
}

TEST_P(SpeculativeVariants, SeededSamplingDrawsWhatArDraws) {
  const auto [shift, fused] = GetParam();
  // Low margins: the sampled token often differs from the argmax, so drafts are often rejected.
  FakeModel model = Oracle(shift, Target, [](int64_t, int) { return 1.5f; });
  for (uint64_t seed : {1u, 2u, 3u}) {
    DecodeRequest ar = Request(DecoderKind::kAr, 6, 40);
    ar.sampling.temperature = 1.0;
    ar.sampling.seed = seed;
    DecodeRequest spec = ar;
    spec.kind = DecoderKind::kSpeculative;
    spec.fuse_commit = fused;
    EXPECT_EQ(Decode(spec, model, shift).emitted, Decode(ar, model, shift).emitted) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(All, SpeculativeVariants,
                         ::testing::Values(Variant{false, false}, Variant{true, false},
                                           Variant{false, true}, Variant{true, true}),
                         [](const auto& info) {
                           return std::string(info.param.shift ? "shifted" : "unshifted") +
                                  (info.param.fused ? "_fused" : "_two_pass");
                         });

TEST(Speculative, PerfectDraftsGrowTheDraftToItsMaximum) {
  const FakeModel model = DraftingOracle(false, Target, [](int64_t) { return false; });
  auto d = Make(Request(DecoderKind::kSpeculative, 6, 200), ModelInfo());
  auto* spec = dynamic_cast<SpeculativeDecoder*>(d.get());
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->draft_length(), 4);
  ASSERT_TRUE(Drive(*d, model).ok());
  EXPECT_EQ(spec->draft_length(), 16);
  const DecodeCounters& c = d->counters();
  EXPECT_EQ(c.draft_accepted, c.drafted);
  // Two passes per round of up to 17 tokens: far fewer passes than AR's 199.
  EXPECT_LT(c.passes(), 40);
  EXPECT_EQ(c.passes(), c.preview_passes + c.verify_passes);
}

TEST(Speculative, BadDraftsShrinkTheDraftToItsMinimum) {
  const FakeModel model = DraftingOracle(false, Target, [](int64_t) { return true; });
  DecodeRequest r = Request(DecoderKind::kSpeculative, 6, 50);
  r.speculative.draft_min = 2;
  auto d = Make(r, ModelInfo());
  auto* spec = dynamic_cast<SpeculativeDecoder*>(d.get());
  auto t = Drive(*d, model);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(spec->draft_length(), 2);
  EXPECT_EQ(d->counters().draft_accepted, 0);
  EXPECT_EQ(t->discarded, d->counters().drafted);
}

TEST(Speculative, AFusedRoundIsOneForward) {
  const FakeModel model = DraftingOracle(false, Target, [](int64_t) { return false; });
  auto two = Make(Request(DecoderKind::kSpeculative, 6, 120), ModelInfo());
  auto one = Make(Request(DecoderKind::kSpeculative, 6, 120, true), ModelInfo());
  ASSERT_TRUE(Drive(*two, model).ok());
  ASSERT_TRUE(Drive(*one, model).ok());
  EXPECT_EQ(one->counters().preview_passes, 0);  // every draft rode on a verify
  EXPECT_LT(one->counters().passes(), two->counters().passes());
  EXPECT_EQ(one->counters().passes(), one->counters().verify_passes);
}

TEST(Speculative, VerifyGroupsAskForCaptureOnlyWithDrafts) {
  auto d = Make(Request(DecoderKind::kSpeculative, 6, 50, true), ModelInfo());
  const FakeModel model = Oracle(false);
  // Prefill, then the fused first round: [seed] with no draft (no capture) + the draft preview.
  std::vector<RowGroup> g = d->NextGroups();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_FALSE(g[0].capture);
  ASSERT_TRUE(d->Consume(model.causal(g[0].tokens)).ok());
  g = d->NextGroups();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].mode, GroupMode::kAppend);
  EXPECT_EQ(g[0].tokens.size(), 1u);
  EXPECT_FALSE(g[0].capture);
  EXPECT_EQ(g[1].mode, GroupMode::kPreview);
  EXPECT_EQ(g[1].first_position, 7);
  EXPECT_EQ(g[1].tokens, std::vector<int32_t>(5, kMask));  // anchor + 4 drafts
  EXPECT_EQ(g[1].logit_rows, (std::vector<int>{1, 2, 3, 4}));
}

TEST(Speculative, RejectsBadSettingsAndModelsWithoutAMask) {
  DecodeRequest r = Request(DecoderKind::kSpeculative, 4, 10);
  r.speculative.draft_min = 8;
  r.speculative.draft_max = 4;
  auto bad = CreateDecoder(r, ModelInfo(), TokenText);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("draft_min"), std::string::npos);
  r.speculative.draft_min = 2;
  r.speculative.draft_max = 64;
  EXPECT_FALSE(CreateDecoder(r, ModelInfo(), TokenText).ok());

  DecodeModelInfo no_mask = ModelInfo();
  no_mask.mask_token_id.reset();
  auto none = CreateDecoder(Request(DecoderKind::kSpeculative, 4, 10), no_mask, TokenText);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("speculative"), std::string::npos);
}

TEST(Speculative, WrongLogitCountIsAnError) {
  auto d = Make(Request(DecoderKind::kSpeculative, 4, 10), ModelInfo());
  d->NextGroups();
  auto r = d->Consume(std::vector<float>(kVocab * 2, 0.0f));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected 64 logits"), std::string::npos);
}

}  // namespace
}  // namespace clover::decode::testing
