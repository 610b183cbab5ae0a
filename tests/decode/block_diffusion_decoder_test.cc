// Tests of the block-diffusion LowConfidence decoder against fake models: block sizes, shift
// convention, tau extremes, the EOS rule, stop strings, budgets and clover-spec.md I3-I5.
#include "decode/block_diffusion_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

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

DecodeRequest Diffusion(int block, int prompt_len, int64_t max_tokens) {
  DecodeRequest r;
  r.kind = DecoderKind::kDiffusion;
  r.prompt = Prompt(prompt_len);
  r.block_size = block;
  r.max_tokens = max_tokens;
  return r;
}

std::vector<int32_t> Targets(int64_t from, int64_t n) {
  std::vector<int32_t> t;
  for (int64_t q = from; q < from + n; ++q) t.push_back(Target(q));
  return t;
}

// Returns the number of fixed (non-mask) rows in each preview of the block at `position`.
std::vector<int> FixedPerPreview(const Trace& t, int64_t position) {
  std::vector<int> out;
  for (const PreviewRecord& p : t.previews) {
    if (p.position == position)
      out.push_back(static_cast<int>(
          std::count_if(p.tokens.begin(), p.tokens.end(), [](int32_t x) { return x != kMask; })));
  }
  return out;
}

// (block size, shift_logits, prompt length is a multiple of the block)
class BlockGrid : public ::testing::TestWithParam<std::tuple<int, bool, bool>> {};

TEST_P(BlockGrid, ConfidentOracleResolvesEachBlockInOnePass) {
  const auto [block, shift, aligned] = GetParam();
  const int prompt_len = aligned ? block : block + 3;
  const int64_t max_tokens = 2 * block + block / 2 + 1;  // not a multiple of the block
  const DecodeModelInfo m = ModelInfo(shift);
  auto d = Make(Diffusion(block, prompt_len, max_tokens), m);
  auto t = Drive(*d, Oracle(shift));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(CheckInvariants(*t, kMask), "");
  EXPECT_EQ(t->emitted, Targets(prompt_len, max_tokens));
  EXPECT_EQ(t->finish, FinishReason::kLength);
  ASSERT_EQ(t->previews.size(), 3u);
  for (int b = 0; b < 3; ++b) {
    EXPECT_EQ(t->previews[b].position, prompt_len + b * block);
    EXPECT_EQ(t->previews[b].tokens, std::vector<int32_t>(block, kMask));
  }
  // The prefill, then two full-block commits; the cut final block is never committed.
  ASSERT_EQ(t->appends.size(), 3u);
  EXPECT_EQ(t->appends[1].size(), static_cast<size_t>(block));
  EXPECT_EQ(t->state.size(), static_cast<size_t>(prompt_len + 2 * block));
  const DecodeCounters& c = d->counters();
  EXPECT_EQ(c.preview_passes, 3);
  EXPECT_EQ(c.commit_passes, 2);
  EXPECT_EQ(c.blocks, 3);
  EXPECT_EQ(c.tokens, max_tokens);
  EXPECT_EQ(c.prefill_rows, prompt_len);
  EXPECT_DOUBLE_EQ(c.tokens_per_pass(), static_cast<double>(max_tokens) / 5);
  EXPECT_EQ(t->text.substr(0, 4), TokenText(Target(prompt_len)).substr(0, 4));
}

INSTANTIATE_TEST_SUITE_P(Decoder, BlockGrid,
                         ::testing::Combine(::testing::Values(8, 16, 32), ::testing::Bool(),
                                            ::testing::Bool()));

TEST(Diffusion, ShiftLogitsAsksForTheRowLeftOfEachMaskedRow) {
  auto d = Make(Diffusion(8, 5, 8), ModelInfo(true));
  const auto g = d->NextGroups();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].mode, GroupMode::kAppend);
  EXPECT_EQ(g[0].logit_rows, (std::vector<int>{4}));  // the prompt's last row predicts row 0
  auto t = Drive(*d, Oracle(true));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->previews[0].logit_rows, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  auto u = Make(Diffusion(8, 5, 8), ModelInfo(false));
  EXPECT_TRUE(u->NextGroups()[0].logit_rows.empty());
}

TEST(Diffusion, WrongShiftConventionIsAnOffByOne) {
  // Decoding a shifted model as unshifted emits the tokens one position ahead.
  auto d = Make(Diffusion(8, 8, 8), ModelInfo(false));
  auto t = Drive(*d, Oracle(true));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->emitted, Targets(9, 8));
}

TEST(Diffusion, TauAtMostZeroFixesTheWholeBlockInOnePass) {
  auto low = [](int64_t, int) { return 1.0f; };  // confidence ~0.05 per row
  DecodeRequest r = Diffusion(16, 7, 32);
  r.threshold = 0.0;
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, Oracle(false, Target, low));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(d->counters().preview_passes, 2);
  EXPECT_EQ(t->emitted, Targets(7, 32));
  EXPECT_EQ(CheckInvariants(*t, kMask), "");
}

TEST(Diffusion, TauAboveOneFixesExactlyOneRowPerPass) {
  for (bool shift : {false, true}) {
    DecodeRequest r = Diffusion(8, 9, 16);
    r.threshold = 1.5;
    auto d = Make(r, ModelInfo(shift));
    auto t = Drive(*d, Oracle(shift));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(d->counters().preview_passes, 16);
    EXPECT_EQ(d->counters().rows_fixed, 16);
    EXPECT_EQ(FixedPerPreview(*t, 9), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(t->emitted, Targets(9, 16));
    EXPECT_EQ(CheckInvariants(*t, kMask), "");
  }
}

TEST(Diffusion, LowConfidenceRowsResolveOnePerPassLeftmostFirst) {
  // Low confidence falling to the right, tau 0.95: the min-one rule fixes one row per pass, the
  // leftmost first. (Exactly equal margins are not exact ties: each row's softmax sums its
  // vocabulary in a different rounding order.)
  auto low = [](int64_t q, int) { return 2.0f - 0.01f * q; };
  auto d = Make(Diffusion(8, 4, 8), ModelInfo());
  auto t = Drive(*d, Oracle(false, Target, low));
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->previews.size(), 8u);
  for (int k = 0; k < 8; ++k) {
    for (int r = 0; r < 8; ++r) EXPECT_EQ(t->previews[k].tokens[r] != kMask, r < k);
  }
}

TEST(Diffusion, MixedConfidencesFixTheConfidentRowsTogether) {
  // Rows predicting even positions are confident, odd ones not: pass 1 fixes the even rows.
  auto mixed = [](int64_t q, int) { return q % 2 == 0 ? 10.0f : 1.0f; };
  auto d = Make(Diffusion(8, 8, 8), ModelInfo());
  auto t = Drive(*d, Oracle(false, Target, mixed));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(FixedPerPreview(*t, 8), (std::vector<int>{0, 4, 5, 6, 7}));
  EXPECT_EQ(d->counters().preview_passes, 5);
  EXPECT_EQ(CheckInvariants(*t, kMask), "");
}

TEST(Diffusion, ShiftedRowZeroFromCausalLogitsNeedsNoExtraPass) {
  // Row 0 reads the stored causal logits. Made the least confident, it is the last masked row
  // under tau > 1 and resolves without a forward: 7 passes for 8 rows.
  auto m = [](int64_t, int row) { return row < 0 ? 1.0f : 10.0f; };
  DecodeRequest r = Diffusion(8, 8, 8);
  r.threshold = 1.5;
  auto d = Make(r, ModelInfo(true));
  auto t = Drive(*d, Oracle(true, Target, m));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(d->counters().preview_passes, 7);
  EXPECT_EQ(d->counters().rows_fixed, 8);
  EXPECT_EQ(t->emitted, Targets(8, 8));
}

// The oracle with an EOS at absolute position `eos_at`.
std::function<int32_t(int64_t)> EosAt(int64_t eos_at) {
  return [eos_at](int64_t q) { return q == eos_at ? kEos : Target(q); };
}

TEST(Diffusion, EosInTheMiddleTruncatesAndNothingAfterItIsEmittedOrCommitted) {
  const int prompt_len = 6;
  const int64_t eos_at = prompt_len + 8 + 3;  // block 1, row 3
  auto d = Make(Diffusion(8, prompt_len, 100), ModelInfo());
  auto t = Drive(*d, Oracle(false, EosAt(eos_at)));
  ASSERT_TRUE(t.ok());
  std::vector<int32_t> want = Targets(prompt_len, 11);
  want.push_back(kEos);
  EXPECT_EQ(t->emitted, want);
  EXPECT_EQ(t->finish, FinishReason::kStop);
  EXPECT_EQ(t->text.find("<2>"), std::string::npos);
  EXPECT_EQ(t->state.size(), static_cast<size_t>(prompt_len + 8));  // block 1 not committed
  EXPECT_EQ(d->counters().tokens, 12);
  EXPECT_EQ(CheckInvariants(*t, kMask), "");
}

TEST(Diffusion, KeptSessionCommitsTheBlockUpToTheEosOnly) {
  const int64_t eos_at = 6 + 8 + 3;
  DecodeRequest r = Diffusion(8, 6, 100);
  r.keep_session = true;
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, Oracle(false, EosAt(eos_at)));
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->appends.size(), 3u);
  std::vector<int32_t> tail = Targets(6 + 8, 3);
  tail.push_back(kEos);
  EXPECT_EQ(t->appends[2], tail);
  EXPECT_EQ(t->committed_events, 6 + 8 + 4);  // prompt, block 0, block 1 up to the EOS
  EXPECT_EQ(d->counters().commit_passes, 2);
}

TEST(Diffusion, AnEosFixedFirstEndsTheBlockOnceItsLeftIsResolved) {
  // One row per pass, the EOS row the most confident: it is fixed first, then rows 0..2; rows
  // 4..7 are never fixed and the block takes 4 passes.
  const int64_t eos_at = 8 + 3;
  auto m = [eos_at](int64_t q, int) { return q == eos_at ? 20.0f : 10.0f - 0.1f * q; };
  DecodeRequest r = Diffusion(8, 8, 100);
  r.threshold = 1.5;
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, Oracle(false, EosAt(eos_at), m));
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->previews.size(), 4u);
  EXPECT_EQ(t->previews[1].tokens[3], kEos);
  for (const PreviewRecord& p : t->previews) {
    for (int row = 4; row < 8; ++row) EXPECT_EQ(p.tokens[row], kMask);
  }
  std::vector<int32_t> want = Targets(8, 3);
  want.push_back(kEos);
  EXPECT_EQ(t->emitted, want);
  EXPECT_EQ(CheckInvariants(*t, kMask), "");
}

TEST(Diffusion, RequestStopIdsEndTheBlockLikeEos) {
  DecodeRequest r = Diffusion(8, 8, 100);
  r.stop_ids = {Target(8 + 5)};
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, Oracle(false));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->emitted, Targets(8, 6));
  EXPECT_EQ(t->finish, FinishReason::kStop);
}

TEST(Diffusion, StopStringsSplitAcrossBlocksAreFound) {
  const int prompt_len = 8;
  // Generated tokens 7 (last row of block 0) and 8 (first row of block 1) read "ST" and "OP".
  auto target = [](int64_t q) -> int32_t { return q == 15 ? 50 : q == 16 ? 51 : Target(q); };
  auto text = [](int32_t t) -> std::string { return t == 50 ? "ST" : t == 51 ? "OP!" : "x"; };
  DecodeRequest r = Diffusion(8, prompt_len, 100);
  r.stop_strings = {"STOP"};
  auto d = Make(r, ModelInfo(), text);
  auto t = Drive(*d, Oracle(false, target));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->text, "xxxxxxx");
  EXPECT_EQ(t->finish, FinishReason::kStop);
  ASSERT_EQ(t->emitted.size(), 9u);  // through the token completing the stop string
  EXPECT_EQ(t->emitted.back(), 51);
  EXPECT_EQ(t->state.size(), static_cast<size_t>(prompt_len + 8));
}

TEST(Diffusion, TextStreamsPerBlockAndHoldsAPossibleStopStart) {
  auto text = [](int32_t t) -> std::string { return t == Target(15) ? "S" : "x"; };
  DecodeRequest r = Diffusion(8, 8, 16);
  r.stop_strings = {"STOP"};
  auto d = Make(r, ModelInfo(), text);
  FakeModel f = Oracle(false);
  ASSERT_TRUE(d->Consume({}).ok());  // prefill
  std::vector<float> logits;
  for (int row = 0; row < 8; ++row) {
    auto l = f.preview(Prompt(8), {}, row);
    logits.insert(logits.end(), l.begin(), l.end());
  }
  auto ev = d->Consume(logits);
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->text, "xxxxxxx");  // the trailing "S" could begin "STOP": held back
  EXPECT_EQ(ev->tokens.size(), 8u);
  EXPECT_FALSE(ev->finish);
}

TEST(Diffusion, MaxTokensShorterThanTheBlockResolvesOnlyTheBudgetRows) {
  DecodeRequest r = Diffusion(16, 5, 3);
  r.threshold = 1.5;
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, Oracle(false, Target, [](int64_t q, int) { return 10.0f - 0.1f * q; }));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->emitted, Targets(5, 3));
  EXPECT_EQ(t->finish, FinishReason::kLength);
  EXPECT_EQ(d->counters().preview_passes, 3);
  EXPECT_EQ(t->previews[0].tokens.size(), 16u);  // the preview still covers the whole block
}

TEST(Diffusion, PresencePenaltyCountsRowsFixedEarlierInTheBlock) {
  // Every row prefers id 10, then 11, 12, ... by 0.1 logits.
  FakeModel f;
  f.vocab = kVocab;
  auto row = [](auto...) {
    std::vector<float> l(kVocab, 0.0f);
    for (int i = 0; i < 30; ++i) l[10 + i] = 5.0f - 0.1f * i;
    return l;
  };
  f.causal = row;
  f.preview = row;
  DecodeRequest r = Diffusion(8, 4, 8);
  r.threshold = 1.5;  // one row per pass: each pass sees the rows fixed before it
  r.penalties.presence = 100.0f;
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, f);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(std::set<int32_t>(t->emitted.begin(), t->emitted.end()).size(), 8u);
  // Rows fixed in the same pass share one history: all pick id 10.
  r.threshold = 0.0;
  auto e = Make(r, ModelInfo());
  auto u = Drive(*e, f);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->emitted, std::vector<int32_t>(8, 10));
}

TEST(Diffusion, CloverModelsGetTheReleasePenaltiesByDefault) {
  FakeModel f;
  f.vocab = kVocab;
  auto row = [](auto...) {
    std::vector<float> l(kVocab, 0.0f);
    l[10] = 5.0f;
    l[11] = 4.5f;  // 5/1.05 - 0.9 = 3.86 < 4.5 once 10 was generated
    return l;
  };
  f.causal = row;
  f.preview = row;
  DecodeRequest r = Diffusion(8, 4, 8);
  r.threshold = 1.5;
  DecodeModelInfo m = ModelInfo();
  auto plain = Drive(*Make(r, m), f);
  m.is_clover = true;
  auto clover = Drive(*Make(r, m), f);
  r.penalties = {.presence = 0.0f, .repetition = 1.0f};
  auto overridden = Drive(*Make(r, m), f);
  ASSERT_TRUE(plain.ok() && clover.ok() && overridden.ok());
  EXPECT_EQ(plain->emitted, std::vector<int32_t>(8, 10));
  EXPECT_EQ(clover->emitted[0], 10);
  EXPECT_EQ(clover->emitted[1], 11);
  EXPECT_EQ(overridden->emitted, plain->emitted);
}

TEST(Diffusion, EosPushEndsTheAnswerAtItsStart) {
  DecodeRequest r = Diffusion(8, 8, 100);
  r.stop_push = StopPushParams{.enabled = true, .eos_start = 5, .window = 1, .max_bias = 100.0f};
  auto d = Make(r, ModelInfo());
  auto t = Drive(*d, Oracle(false));
  ASSERT_TRUE(t.ok());
  std::vector<int32_t> want = Targets(8, 5);
  want.push_back(kEos);
  EXPECT_EQ(t->emitted, want);
}

TEST(Diffusion, SeededSamplingIsReproducible) {
  FakeModel f;
  f.vocab = kVocab;
  auto flat = [](auto...) { return std::vector<float>(kVocab, 0.0f); };
  f.causal = flat;
  f.preview = flat;
  DecodeRequest r = Diffusion(8, 4, 24);
  r.sampling = {.temperature = 1.0f, .seed = 77};
  auto a = Drive(*Make(r, ModelInfo()), f);
  auto b = Drive(*Make(r, ModelInfo()), f);
  r.sampling.seed = 78;
  auto c = Drive(*Make(r, ModelInfo()), f);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->emitted, b->emitted);
  EXPECT_NE(a->emitted, c->emitted);
  EXPECT_EQ(CheckInvariants(*a, kMask), "");
}

TEST(Diffusion, AbsoluteAlignmentPreFixesThePromptTail) {
  DecodeModelInfo m = ModelInfo();
  m.block_alignment = model::BlockAlignment::kAbsolute;
  DecodeRequest r = Diffusion(8, 11, 13);
  r.prompt[9] = kEos;  // a template's end-of-turn in the tail is not a stop
  auto d = Make(r, m);
  auto t = Drive(*d, Oracle(false));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->appends[0].size(), 8u);
  ASSERT_GE(t->previews.size(), 2u);
  EXPECT_EQ(t->previews[0].position, 8);
  EXPECT_EQ(std::vector<int32_t>(t->previews[0].tokens.begin(), t->previews[0].tokens.begin() + 3),
            std::vector<int32_t>(r.prompt.begin() + 8, r.prompt.end()));
  EXPECT_EQ(t->previews[0].logit_rows, (std::vector<int>{3, 4, 5, 6, 7}));
  EXPECT_EQ(t->emitted, Targets(11, 13));
  EXPECT_EQ(t->previews[1].position, 16);
  EXPECT_EQ(t->state.size(), 16u);  // block 1 is cut by max_tokens: not committed
}

TEST(Diffusion, RejectsBadRequestsAndMisuse) {
  DecodeModelInfo no_mask = ModelInfo();
  no_mask.mask_token_id.reset();
  auto a = CreateDecoder(Diffusion(8, 4, 8), no_mask, TokenText);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(CreateDecoder(Diffusion(12, 4, 8), ModelInfo(), TokenText).ok());
  EXPECT_FALSE(CreateDecoder(Diffusion(8, 0, 8), ModelInfo(), TokenText).ok());
  EXPECT_FALSE(CreateDecoder(Diffusion(8, 4, 0), ModelInfo(), TokenText).ok());

  auto d = Make(Diffusion(8, 4, 8), ModelInfo());
  ASSERT_TRUE(d->Consume({}).ok());
  const std::vector<float> one_row(kVocab, 0.0f);
  auto bad = d->Consume(one_row);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto e = Make(Diffusion(8, 4, 8), ModelInfo());
  ASSERT_TRUE(Drive(*e, Oracle(false)).ok());
  EXPECT_EQ(e->Consume({}).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace clover::decode::testing

namespace clover::decode::testing {
namespace {

// A model whose logits are pseudo-random functions of (context, block, row): confidences move as
// rows get fixed, EOS appears now and then.
FakeModel RandomModel(uint64_t seed, float scale) {
  auto logits = [seed, scale](std::span<const int32_t> ctx, std::span<const int32_t> block,
                              int row) {
    uint64_t h = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(row);
    for (int32_t t : ctx) h = (h ^ static_cast<uint64_t>(t)) * 0x100000001B3ull;
    for (int32_t t : block) h = (h ^ static_cast<uint64_t>(t + 7)) * 0x100000001B3ull;
    std::mt19937_64 gen(h);
    std::vector<float> l(kVocab);
    for (float& x : l) x = scale * static_cast<float>(gen() % 2001) / 1000.0f - scale;
    l[kMask] += 3.0f * scale;  // the model likes the mask id: it must still never be chosen
    return l;
  };
  FakeModel f;
  f.vocab = kVocab;
  f.causal = [logits](std::span<const int32_t> ctx) { return logits(ctx, {}, -1); };
  f.preview = logits;
  return f;
}

TEST(Diffusion, RandomModelsKeepTheInvariants) {
  std::mt19937 gen(5);
  for (int trial = 0; trial < 60; ++trial) {
    const int block = 8 << (trial % 3);
    const bool shift = trial % 2 == 1;
    DecodeRequest r = Diffusion(block, 1 + static_cast<int>(gen() % 40), 1 + gen() % 70);
    r.threshold = std::vector<double>{-1.0, 0.3, 0.8, 0.95, 2.0}[gen() % 5];
    if (trial % 4 == 0) r.sampling = {.temperature = 0.8f, .top_p = 0.9f, .seed = gen()};
    if (trial % 5 == 0) r.penalties.presence = 1.0f;
    const DecodeModelInfo m = ModelInfo(shift);
    auto d = Make(r, m);
    const float scale = 0.5f + static_cast<float>(gen() % 60) / 10.0f;
    auto t = Drive(*d, RandomModel(gen(), scale));
    ASSERT_TRUE(t.ok()) << trial << ": " << t.status().ToString();
    SCOPED_TRACE(trial);
    EXPECT_EQ(CheckInvariants(*t, kMask), "");
    ASSERT_TRUE(t->finish.has_value());
    ASSERT_FALSE(t->emitted.empty());
    EXPECT_LE(static_cast<int64_t>(t->emitted.size()), r.max_tokens);
    if (*t->finish == FinishReason::kLength) {
      EXPECT_EQ(static_cast<int64_t>(t->emitted.size()), r.max_tokens);
    } else {
      EXPECT_EQ(t->emitted.back(), kEos);
    }
    EXPECT_EQ(std::count(t->emitted.begin(), t->emitted.end() - 1, kEos), 0);
    for (int32_t x : t->emitted) EXPECT_LT(x, kValid);
    // What was committed after the prompt is exactly the start of the answer, block by block.
    const size_t answer = t->state.size() - r.prompt.size();
    EXPECT_EQ(answer % block, 0u);
    EXPECT_TRUE(std::equal(t->state.begin() + r.prompt.size(), t->state.end(), t->emitted.begin()));
    EXPECT_GE(d->counters().rows_fixed, d->counters().preview_passes);
    EXPECT_EQ(d->counters().tokens, static_cast<int64_t>(t->emitted.size()));
  }
}

// Every row equally unsure: the min-one rule fixes the leftmost masked row each pass.
FakeModel OneRowPerPass(bool shift = false) {
  return Oracle(shift, Target, [](int64_t, int) { return 1.0f; });
}

std::vector<int> Range(int from, int to) {
  std::vector<int> r;
  for (int j = from; j < to; ++j) r.push_back(j);
  return r;
}

TEST(DiffusionReuse, OffByDefault) {
  auto d = Make(Diffusion(8, 5, 16), ModelInfo());
  RecordingDecoder rec(*d);
  ASSERT_TRUE(Drive(rec, OneRowPerPass()).ok());
  ASSERT_FALSE(rec.preview_groups.empty());
  for (const RowGroup& g : rec.preview_groups) EXPECT_FALSE(g.reuse.has_value());
}

// clover-decoding.md §9.1: live rows = masked at the pass start + fixed by the previous pass;
// a refresh (every row) on the block's first pass and every R passes after.
TEST(DiffusionReuse, RefreshEveryRPassesAndLiveRowsInBetween) {
  DecodeRequest r = Diffusion(16, 5, 16);
  r.reuse_passes = 3;
  auto d = Make(r, ModelInfo());
  RecordingDecoder rec(*d);
  auto t = Drive(rec, OneRowPerPass());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(CheckInvariants(*t, kMask), "");
  EXPECT_EQ(t->emitted, Targets(5, 16));
  ASSERT_EQ(rec.preview_groups.size(), 16u);
  // Rows 0..pass-1 are fixed before each pass: refreshes every 3 passes, until the masked rows
  // halve faster than that (4 at pass 12, then 2 and 1).
  const std::set<int> refreshes = {0, 3, 6, 9, 12, 14, 15};
  for (int pass = 0; pass < 16; ++pass) {
    const RowGroup& g = rec.preview_groups[pass];
    ASSERT_TRUE(g.reuse.has_value());
    SCOPED_TRACE(pass);
    EXPECT_EQ(g.reuse->refresh, refreshes.count(pass) == 1);
    EXPECT_EQ(g.reuse->live_rows, g.reuse->refresh ? Range(0, 16) : Range(pass - 1, 16));
  }
}

TEST(DiffusionReuse, RefreshOnceTheMaskedRowsHaveHalved) {
  DecodeRequest r = Diffusion(8, 5, 8);
  r.reuse_passes = 100;
  auto d = Make(r, ModelInfo());
  RecordingDecoder rec(*d);
  ASSERT_TRUE(Drive(rec, OneRowPerPass()).ok());
  ASSERT_EQ(rec.preview_groups.size(), 8u);
  std::vector<int> refreshes;
  for (int pass = 0; pass < 8; ++pass)
    if (rec.preview_groups[pass].reuse->refresh) refreshes.push_back(pass);
  // Masked rows 8, 7, ..., 1: refreshes at 8 masked, then at 4 (half of 8), 2 and 1.
  EXPECT_EQ(refreshes, (std::vector<int>{0, 4, 6, 7}));
}

// The cache never serves two blocks: each block's first preview refreshes, also when it runs
// fused with the previous commit; R = 1 refreshes every pass.
TEST(DiffusionReuse, EveryBlockStartsWithARefresh) {
  for (const bool fused : {false, true}) {
    for (const int reuse : {1, 4}) {
      DecodeRequest r = Diffusion(8, 5, 24);
      r.reuse_passes = reuse;
      r.fuse_commit = fused;
      auto d = Make(r, ModelInfo());
      RecordingDecoder rec(*d);
      auto t = Drive(rec, OneRowPerPass());
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      EXPECT_EQ(t->emitted, Targets(5, 24));
      ASSERT_EQ(rec.preview_groups.size(), 24u);
      for (size_t k = 0; k < rec.preview_groups.size(); ++k) {
        const bool first =
            k == 0 || rec.preview_groups[k].first_position != rec.preview_groups[k - 1].first_position;
        if (first || reuse == 1) EXPECT_TRUE(rec.preview_groups[k].reuse->refresh) << k;
      }
      if (reuse > 1) EXPECT_FALSE(rec.preview_groups[1].reuse->refresh);
    }
  }
}

// With shift_logits a masked row reads the logits of the row to its left, which must run even
// when it was fixed long ago.
TEST(DiffusionReuse, ShiftedLogitRowsAreLive) {
  DecodeRequest r = Diffusion(8, 5, 8);
  r.reuse_passes = 8;
  auto d = Make(r, ModelInfo(true));
  // Rows resolve right to left: the confident row is always the rightmost masked one.
  auto t = Drive(*d, Oracle(true, Target, [](int64_t q, int row) {
    return row < 0 ? 0.5f : 1.0f + 0.1f * static_cast<float>(row);
  }));
  ASSERT_TRUE(t.ok());
  auto d2 = Make(r, ModelInfo(true));
  RecordingDecoder rec(*d2);
  ASSERT_TRUE(Drive(rec, Oracle(true, Target,
                                [](int64_t q, int row) {
                                  return row < 0 ? 0.5f : 1.0f + 0.1f * static_cast<float>(row);
                                }))
                  .ok());
  ASSERT_GE(rec.preview_groups.size(), 3u);
  for (const RowGroup& g : rec.preview_groups) {
    for (int row : g.logit_rows)
      EXPECT_TRUE(std::binary_search(g.reuse->live_rows.begin(), g.reuse->live_rows.end(), row));
  }
  EXPECT_EQ(t->emitted, Targets(5, 8));
}

TEST(DiffusionReuse, NegativeReusePassesAreRejected) {
  DecodeRequest r = Diffusion(8, 5, 8);
  r.reuse_passes = -1;
  EXPECT_FALSE(CreateDecoder(r, ModelInfo(), TokenText).ok());
}

}  // namespace
}  // namespace clover::decode::testing
