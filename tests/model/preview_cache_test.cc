// Expert budget + live-row reuse in the forward (clover-decoding.md §8, §9.1): a refresh equals a
// plain preview, a reuse pass computes only its live rows and reads the rest from the cache, the
// cache holds what the refresh computed, misuse is rejected, and the committed state is untouched.
#include "model/preview_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/rms_norm.h"
#include "model/forward_test_util.h"
#include "model/random_weights.h"

namespace clover::model {
namespace {

using testing::Engine;
using testing::Logits;

// A random Clover model; `all_experts` makes every coreset the full expert set, so that reusing
// the coreset changes nothing and only the row reuse is left to compare.
ModelWeights RandomClover(const std::string& name, uint64_t seed, bool all_experts = false) {
  Result<ModelConfig> c = RandomModelConfig(name);
  EXPECT_TRUE(c.ok());
  if (all_experts) c->diffusion.coreset_min_experts = c->n_experts;
  return MakeRandomWeights(*c, seed, DType::kF32);
}

std::vector<int32_t> Ids(int n, int seed) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 131 + seed * 17 + 7) % 511);
  return ids;
}

// A block of `rows` rows, all masked except a few fixed ones.
std::vector<int32_t> Block(const ModelWeights& w, int rows) {
  std::vector<int32_t> b(rows, static_cast<int32_t>(*w.config.mask_token_id));
  b[1] = 5;
  b[rows - 1] = 9;
  return b;
}

std::vector<int64_t> AllRows(int64_t n) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < n; ++i) r.push_back(i);
  return r;
}

// Runs one preview of `tokens` after `seq` with `reuse` and returns the logits of `logit_rows`.
Result<ForwardLogits> RunPreview(Engine& e, const SequenceState& seq,
                                 const std::vector<int32_t>& tokens,
                                 std::vector<int64_t> logit_rows, PreviewReuse reuse) {
  ForwardBatch batch;
  batch.previews.push_back({&seq, tokens, seq.length(), std::move(logit_rows), std::move(reuse)});
  return e.model->Forward(batch, e.scratch);
}

Logits Rows(const ForwardLogits& out) {
  Logits rows;
  for (int64_t r = 0; r < out.n_rows; ++r) rows.emplace_back(out.row(r), out.row(r) + out.vocab);
  return rows;
}

// Returns the rows of `all` listed in `pick`.
Logits Pick(const Logits& all, const std::vector<int64_t>& pick) {
  Logits out;
  for (int64_t r : pick) out.push_back(all[r]);
  return out;
}

// Every float the cache holds for `rows` block rows, layer by layer.
std::vector<std::vector<float>> CacheRows(PreviewCache& cache, const ModelConfig& c, int64_t rows) {
  std::vector<std::vector<float>> out;
  for (int il = 0; il < c.n_layers; ++il) {
    const float* first = cache.kv_row(il, 0);
    out.emplace_back(first, first + rows * cache.row_stride(il));
  }
  return out;
}

// With a cache, a refresh is the plain preview: bit-identical logits, coresets and expert counts,
// for both preview GDN modes, every block size and a prefix ending inside a KV page.
TEST(PreviewCacheTest, RefreshEqualsThePlainPreview) {
  for (const char* name : {"clover-tiny", "clover-tiny-nopreview"}) {
    const ModelWeights w = RandomClover(name, 31);
    Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/8);
    SequenceState seq = e.model->NewSequence();
    e.Append(seq, Ids(13, 1));
    for (int block : {8, 16, 32}) {
      const std::vector<int32_t> rows = Block(w, block);
      ForwardLogits plain_raw;
      const Logits plain = e.Preview(seq, rows, &plain_raw);
      PreviewCache cache;
      Result<ForwardLogits> cached = RunPreview(e, seq, rows, AllRows(block), {&cache, true, {}});
      ASSERT_TRUE(cached.ok()) << cached.status().ToString();
      EXPECT_EQ(Rows(*cached), plain) << name << " B " << block;
      EXPECT_EQ(cached->coresets, plain_raw.coresets);
      EXPECT_EQ(cached->distinct_experts, plain_raw.distinct_experts);
      EXPECT_TRUE(cache.Holds(&seq, seq.length(), block,
                              e.model->preview_gdn() == PreviewGdn::kBidirectional));
    }
  }
}

// On a block whose tokens did not change since the refresh, the cached rows are exactly what the
// live rows would see in a full pass, so any live subset gets the full pass's logits.
TEST(PreviewCacheTest, ReuseOnAnUnchangedBlockEqualsTheFullPass) {
  for (const char* name : {"clover-tiny", "clover-tiny-nopreview"}) {
    const ModelWeights w = RandomClover(name, 32);
    Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/8);
    SequenceState seq = e.model->NewSequence();
    e.Append(seq, Ids(11, 2));
    const std::vector<int32_t> rows = Block(w, 16);
    ForwardLogits plain_raw;
    const Logits plain = e.Preview(seq, rows, &plain_raw);
    PreviewCache cache;
    ASSERT_TRUE(RunPreview(e, seq, rows, {}, {&cache, true, {}}).ok());
    for (const std::vector<int64_t>& live :
         {std::vector<int64_t>{0}, {1, 4, 6}, {3, 8, 9, 15}, AllRows(16)}) {
      Result<ForwardLogits> out = RunPreview(e, seq, rows, live, {&cache, false, live});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(Rows(*out), Pick(plain, live)) << name << " live " << live.size();
      EXPECT_EQ(out->coresets, plain_raw.coresets);  // the refresh's sets
      for (size_t il = 0; il < out->distinct_experts.size(); ++il)
        EXPECT_LE(out->distinct_experts[il], plain_raw.distinct_experts[il]);
    }
  }
}

// Live rows run with their new tokens; rows that are not live keep the values of the pass that
// computed them, so the live rows see stale neighbours and differ from a full pass.
TEST(PreviewCacheTest, LiveRowsRunWithTheirNewTokensOthersStayStale) {
  const ModelWeights w = RandomClover("clover-tiny", 33, /*all_experts=*/true);
  Engine e(w);
  SequenceState seq = e.model->NewSequence();
  e.Append(seq, Ids(9, 3));
  const std::vector<int32_t> before = Block(w, 8);
  std::vector<int32_t> after = before;
  after[2] = 77;
  after[5] = 123;
  const Logits full_after = e.Preview(seq, after);

  PreviewCache cache;
  ASSERT_TRUE(RunPreview(e, seq, before, {}, {&cache, true, {}}).ok());
  Result<ForwardLogits> all = RunPreview(e, seq, after, AllRows(8), {&cache, false, AllRows(8)});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(Rows(*all), full_after);

  PreviewCache stale;
  ASSERT_TRUE(RunPreview(e, seq, before, {}, {&stale, true, {}}).ok());
  const std::vector<int64_t> live = {0, 2, 5};
  Result<ForwardLogits> some = RunPreview(e, seq, after, live, {&stale, false, live});
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_GT(testing::MaxAbsDiff(Rows(*some), Pick(full_after, live)), 1e-3);
}

// The cache holds what the refresh computed (layer 0's GDN inputs recomputed here from the
// embeddings), and a reuse pass rewrites only its live rows.
TEST(PreviewCacheTest, CacheHoldsTheRefreshValuesAndReuseRewritesLiveRowsOnly) {
  const ModelWeights w = RandomClover("clover-tiny", 34);
  const ModelConfig& c = w.config;
  ASSERT_EQ(c.layer_kinds[0], LayerKind::kGatedDeltaNet);
  Engine e(w);
  SequenceState seq = e.model->NewSequence();
  e.Append(seq, Ids(10, 4));
  const int B = 8;
  const std::vector<int32_t> before = Block(w, B);
  PreviewCache cache;
  ASSERT_TRUE(RunPreview(e, seq, before, {}, {&cache, true, {}}).ok());
  const std::vector<std::vector<float>> refreshed = CacheRows(cache, c, B);
  ASSERT_EQ(cache.tokens().size(), static_cast<size_t>(B));
  EXPECT_TRUE(std::equal(before.begin(), before.end(), cache.tokens().begin()));

  // Layer 0 reads the embeddings: x = RMSNorm(embed), pre-conv = W_qkv x, beta = sigmoid(W_b x),
  // g = a * softplus(W_a x + dt_bias).
  const int64_t H = c.hidden, C = c.conv_dim();
  std::vector<float> x(B * H), mixed(B * C), beta(B * c.hv), alpha(B * c.hv);
  for (int r = 0; r < B; ++r)
    kernels::ref::RmsNorm(w.embed.f32() + before[r] * H, w.layers[0].attn_norm.f32(), H, c.rms_eps,
                          x.data() + r * H);
  const GdnWeights& g = w.layers[0].gdn;
  kernels::MatMul(e.ctx, x.data(), B, H, g.qkv, mixed.data(), C);
  kernels::MatMul(e.ctx, x.data(), B, H, g.beta, beta.data(), c.hv);
  kernels::MatMul(e.ctx, x.data(), B, H, g.alpha, alpha.data(), c.hv);
  for (int r = 0; r < B; ++r) {
    const float* row = cache.gdn_row(0, r);
    for (int64_t ch = 0; ch < C; ++ch) ASSERT_NEAR(row[ch], mixed[r * C + ch], 1e-5f) << r;
    for (int h = 0; h < c.hv; ++h) {
      EXPECT_NEAR(row[C + h], kernels::ref::Sigmoid(beta[r * c.hv + h]), 1e-6f);
      EXPECT_NEAR(row[C + c.hv + h],
                  g.a.f32()[h] * kernels::ref::Softplus(alpha[r * c.hv + h] + g.dt_bias.f32()[h]),
                  1e-5f);
    }
  }

  std::vector<std::vector<int32_t>> coresets;
  for (int il = 0; il < c.n_layers; ++il) coresets.push_back(cache.coreset(il));
  std::vector<int32_t> after = before;
  after[3] = 200;
  const std::vector<int64_t> live = {0, 3, 4};
  ASSERT_TRUE(RunPreview(e, seq, after, live, {&cache, false, live}).ok());
  const std::vector<std::vector<float>> reused = CacheRows(cache, c, B);
  for (int il = 0; il < c.n_layers; ++il) {
    const int64_t stride = cache.row_stride(il);
    for (int r = 0; r < B; ++r) {
      const bool is_live = r == 0 || r == 3 || r == 4;
      const std::vector<float> a(refreshed[il].begin() + r * stride,
                                 refreshed[il].begin() + (r + 1) * stride);
      const std::vector<float> b(reused[il].begin() + r * stride,
                                 reused[il].begin() + (r + 1) * stride);
      if (!is_live) EXPECT_EQ(a, b) << "layer " << il << " row " << r;
      if (r == 3) EXPECT_NE(a, b) << "layer " << il;  // its token changed
    }
    EXPECT_EQ(cache.coreset(il), coresets[il]) << "layer " << il;
  }
  EXPECT_EQ(cache.tokens()[3], 200);
}

// clover-spec.md I1 with reuse: refresh and reuse passes leave the committed state bit-identical,
// and a reuse pass is deterministic.
TEST(PreviewCacheTest, ReusePassesLeaveTheStateUntouched) {
  for (const char* name : {"clover-tiny", "clover-tiny-nopreview"}) {
    const ModelWeights w = RandomClover(name, 35);
    Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/8);
    SequenceState seq = e.model->NewSequence();
    e.Append(seq, Ids(21, 5));
    const std::vector<float> state = testing::StateBytes(seq, w.config);
    std::vector<int32_t> rows = Block(w, 16);
    PreviewCache cache;
    ASSERT_TRUE(RunPreview(e, seq, rows, {}, {&cache, true, {}}).ok());
    rows[7] = 42;
    const std::vector<int64_t> live = {2, 7, 11};
    Result<ForwardLogits> a = RunPreview(e, seq, rows, live, {&cache, false, live});
    Result<ForwardLogits> b = RunPreview(e, seq, rows, live, {&cache, false, live});
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(Rows(*a), Rows(*b)) << name;
    EXPECT_EQ(testing::StateBytes(seq, w.config), state) << name;
    EXPECT_EQ(seq.length(), 21);
  }
}

// One call with an append (sequence A), a reuse preview (B) and a plain preview (C) returns what
// three separate calls return.
TEST(PreviewCacheTest, MixedBatchEqualsSeparateCalls) {
  const ModelWeights w = RandomClover("clover-tiny", 36);
  Engine e(w);
  SequenceState a = e.model->NewSequence(), a2 = e.model->NewSequence();
  SequenceState b = e.model->NewSequence(), c = e.model->NewSequence();
  e.Append(a, Ids(7, 6));
  e.Append(a2, Ids(7, 6));
  e.Append(b, Ids(12, 7));
  e.Append(c, Ids(5, 8));
  std::vector<int32_t> block_b = Block(w, 8);
  const std::vector<int32_t> block_c = Block(w, 8);
  PreviewCache cache, cache2;
  ASSERT_TRUE(RunPreview(e, b, block_b, {}, {&cache, true, {}}).ok());
  ASSERT_TRUE(RunPreview(e, b, block_b, {}, {&cache2, true, {}}).ok());
  block_b[4] = 99;
  const std::vector<int64_t> live = {3, 4, 5};
  const std::vector<int32_t> step = {40, 41};
  const Logits want_a = e.Append(a2, step);
  Result<ForwardLogits> want_b = RunPreview(e, b, block_b, live, {&cache2, false, live});
  ASSERT_TRUE(want_b.ok());
  const Logits want_c = e.Preview(c, block_c);

  ForwardBatch batch;
  batch.appends.push_back({&a, step, a.length(), {0, 1}});
  batch.previews.push_back({&b, block_b, b.length(), live, {&cache, false, live}});
  batch.previews.push_back({&c, block_c, c.length(), AllRows(8)});
  Result<ForwardLogits> out = e.model->Forward(batch, e.scratch);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  Logits want = want_a;
  for (const auto& r : Rows(*want_b)) want.push_back(r);
  for (const auto& r : want_c) want.push_back(r);
  EXPECT_EQ(Rows(*out), want);
}

// Fused commit + first preview with a refresh, then a reuse pass of that block: the cache belongs
// to the block after the appended rows.
TEST(PreviewCacheTest, RefreshInAFusedCommitServesTheNextPasses) {
  const ModelWeights w = RandomClover("clover-tiny", 37);
  Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/8);
  SequenceState fused = e.model->NewSequence(), split = e.model->NewSequence();
  e.Append(fused, Ids(13, 9));
  e.Append(split, Ids(13, 9));
  const std::vector<int32_t> commit = Ids(8, 10);
  std::vector<int32_t> next = Block(w, 8);
  PreviewCache cache, split_cache;
  ForwardBatch batch;
  batch.appends.push_back({&fused, commit, fused.length(), {}});
  batch.previews.push_back({&fused, next, fused.length() + 8, AllRows(8), {&cache, true, {}}});
  Result<ForwardLogits> out = e.model->Forward(batch, e.scratch);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  e.Append(split, commit);
  Result<ForwardLogits> want = RunPreview(e, split, next, AllRows(8), {&split_cache, true, {}});
  ASSERT_TRUE(want.ok());
  EXPECT_LE(testing::MaxAbsDiff(Rows(*out), Rows(*want)), 1e-5);

  next[0] = 17;
  const std::vector<int64_t> live = {0, 2};
  Result<ForwardLogits> reused = RunPreview(e, fused, next, live, {&cache, false, live});
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
  Result<ForwardLogits> split_reused =
      RunPreview(e, split, next, live, {&split_cache, false, live});
  ASSERT_TRUE(split_reused.ok());
  EXPECT_LE(testing::MaxAbsDiff(Rows(*reused), Rows(*split_reused)), 1e-5);
}

TEST(PreviewCacheTest, MisuseIsRejectedBeforeAnythingChanges) {
  const ModelWeights w = RandomClover("clover-tiny", 38);
  Engine e(w);
  SequenceState seq = e.model->NewSequence(), other = e.model->NewSequence();
  e.Append(seq, Ids(9, 11));
  e.Append(other, Ids(9, 12));
  const std::vector<int32_t> rows = Block(w, 8);
  const std::vector<int64_t> live = {0, 2};
  auto code = [](const Result<ForwardLogits>& r) { return r.status().code(); };

  PreviewCache cache;
  EXPECT_EQ(code(RunPreview(e, seq, rows, live, {&cache, false, live})),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(RunPreview(e, seq, rows, {}, {&cache, true, {}}).ok());
  // Another sequence, another block size.
  EXPECT_EQ(code(RunPreview(e, other, rows, live, {&cache, false, live})),
            StatusCode::kFailedPrecondition);
  const std::vector<int32_t> longer = Block(w, 16);
  EXPECT_EQ(code(RunPreview(e, seq, longer, live, {&cache, false, live})),
            StatusCode::kFailedPrecondition);
  // A logit row that is not live; a changed row that is not live; bad live lists.
  EXPECT_EQ(code(RunPreview(e, seq, rows, {1}, {&cache, false, live})),
            StatusCode::kInvalidArgument);
  std::vector<int32_t> changed = rows;
  changed[5] = 3;
  EXPECT_EQ(code(RunPreview(e, seq, changed, live, {&cache, false, live})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunPreview(e, seq, rows, {}, {&cache, false, {2, 0}})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunPreview(e, seq, rows, {}, {&cache, false, {0, 8}})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code(RunPreview(e, seq, rows, {}, {&cache, false, {}})), StatusCode::kInvalidArgument);
  // Two groups sharing one cache.
  ForwardBatch two;
  two.previews.push_back({&seq, rows, seq.length(), {}, {&cache, true, {}}});
  two.previews.push_back({&other, rows, other.length(), {}, {&cache, true, {}}});
  EXPECT_EQ(e.model->Forward(two, e.scratch).status().code(), StatusCode::kInvalidArgument);
  // Another preview GDN mode than the refresh's.
  ASSERT_TRUE(e.model->set_preview_gdn(PreviewGdn::kCausal).ok());
  EXPECT_EQ(code(RunPreview(e, seq, rows, live, {&cache, false, live})),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(e.model->set_preview_gdn(PreviewGdn::kBidirectional).ok());
  // None of that touched the cache: it still serves the block.
  EXPECT_TRUE(std::equal(rows.begin(), rows.end(), cache.tokens().begin()));
  Result<ForwardLogits> ok = RunPreview(e, seq, rows, live, {&cache, false, live});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(Rows(*ok), Pick(e.Preview(seq, rows), live));
  // After a commit the block is another one.
  e.Append(seq, {4});
  EXPECT_EQ(code(RunPreview(e, seq, rows, live, {&cache, false, live})),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace clover::model
