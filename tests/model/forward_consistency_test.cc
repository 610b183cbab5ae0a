// Alternative paths through the forward must agree (style.md §5): chunked GDN = recurrent,
// split prefill = whole, batch = one-by-one, several groups = separate calls, snapshot/restore.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "model/forward_test_util.h"
#include "model/random_weights.h"

namespace clover::model {
namespace {

using testing::Engine;
using testing::RandomIds;
using testing::Logits;
using testing::MaxRelDiff;

// Different but equivalent f32 summation orders through 4 layers: relative to the largest
// logit, observed differences are ~1e-6; 2e-5 leaves margin without hiding real bugs (a wrong
// state hand-over moves logits by O(1)).
constexpr double kPathTolerance = 2e-5;

ModelConfig TinyConfig() { return RandomModelConfig("tiny").value(); }

void SetLayerKinds(ModelConfig& c, int interval) {
  c.full_attention_interval = interval;
  c.layer_kinds.clear();
  for (int i = 0; i < c.n_layers; ++i)
    c.layer_kinds.push_back(interval > 0 && (i + 1) % interval == 0 ? LayerKind::kFullAttention
                                                                    : LayerKind::kGatedDeltaNet);
}

struct Shape {
  std::string name;
  ModelConfig config;
};

std::vector<Shape> Shapes() {
  std::vector<Shape> s;
  s.push_back({"tiny", TinyConfig()});
  {
    ModelConfig c = TinyConfig();
    c.n_layers = 2;
    SetLayerKinds(c, 0);
    s.push_back({"two_layers_all_gdn", c});
  }
  {
    ModelConfig c = TinyConfig();
    SetLayerKinds(c, 2);
    s.push_back({"interval_2", c});
  }
  {
    ModelConfig c = TinyConfig();
    c.n_head_kv = 1;
    s.push_back({"one_kv_head", c});
  }
  {
    ModelConfig c = TinyConfig();
    c.rope_dim = c.head_dim / 2;
    s.push_back({"rotary_half", c});
  }
  {
    ModelConfig c = TinyConfig();
    c.n_experts = 4;
    c.top_k = 1;
    s.push_back({"four_experts_top1", c});
  }
  {
    ModelConfig c = TinyConfig();
    c.shared_ffn = 0;
    c.n_shared_experts = 0;
    s.push_back({"no_shared_expert", c});
  }
  {
    ModelConfig c = TinyConfig();
    c.hk = 1;
    c.hv = 3;
    s.push_back({"three_v_heads_per_k_head", c});
  }
  return s;
}

class ShapeTest : public ::testing::TestWithParam<Shape> {};

TEST_P(ShapeTest, ChunkedEqualsRecurrentAndBatchEqualsOneByOne) {
  const ModelConfig& c = GetParam().config;
  ModelWeights w = MakeRandomWeights(c, 42, DType::kF32);
  Engine e(w);
  ASSERT_NE(e.model, nullptr);
  const std::vector<int32_t> ids = RandomIds(130, c.vocab_size, 7);
  e.model->set_gdn_scan(GdnScan::kChunked);
  const Logits chunked = e.Prompt(ids);
  e.model->set_gdn_scan(GdnScan::kRecurrent);
  const Logits recurrent = e.Prompt(ids);
  EXPECT_LE(MaxRelDiff(chunked, recurrent), kPathTolerance);
  e.model->set_gdn_scan(GdnScan::kAuto);
  const Logits one_by_one = e.Prompt(ids, std::vector<int64_t>(ids.size(), 1));
  EXPECT_LE(MaxRelDiff(one_by_one, chunked), kPathTolerance);
}

INSTANTIATE_TEST_SUITE_P(Configs, ShapeTest, ::testing::ValuesIn(Shapes()),
                         [](const auto& info) { return info.param.name; });

// The acceptance prompt lengths of the issue, through the whole model.
TEST(ForwardConsistencyTest, ChunkedEqualsRecurrentAtChunkBoundaries) {
  ModelWeights w = MakeRandomWeights(TinyConfig(), 1, DType::kF32);
  Engine e(w);
  const std::vector<int32_t> all = RandomIds(300, 512, 3);
  for (int64_t n : {1, 2, 63, 64, 65, 127, 128, 129, 300}) {
    const std::vector<int32_t> ids(all.begin(), all.begin() + n);
    e.model->set_gdn_scan(GdnScan::kChunked);
    const Logits chunked = e.Prompt(ids);
    e.model->set_gdn_scan(GdnScan::kRecurrent);
    const Logits recurrent = e.Prompt(ids);
    EXPECT_LE(MaxRelDiff(chunked, recurrent), 1e-5) << "length " << n;
  }
}

TEST(ForwardConsistencyTest, PrefillInPiecesEqualsAtOnceForEverySplit) {
  ModelWeights w = MakeRandomWeights(TinyConfig(), 2, DType::kF32);
  Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/16);
  const std::vector<int32_t> ids = RandomIds(70, 512, 5);
  const Logits whole = e.Prompt(ids);
  for (int64_t split = 1; split < 70; ++split)
    ASSERT_LE(MaxRelDiff(e.Prompt(ids, {split}), whole), kPathTolerance) << "split " << split;
}

TEST(ForwardConsistencyTest, SnapshotRestoreReplaysIdentically) {
  ModelWeights w = MakeRandomWeights(TinyConfig(), 3, DType::kF32);
  // Pages of 4 positions, so the decoded tokens cross pages shared with the snapshot.
  Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/4);
  SequenceState seq = e.model->NewSequence();
  e.Append(seq, RandomIds(10, 512, 9));
  const SequenceSnapshot snap = seq.Snapshot();
  const std::vector<int32_t> a = RandomIds(5, 512, 10), b = RandomIds(5, 512, 11);
  Logits first;
  for (int32_t id : a) first.push_back(e.Append(seq, {id})[0]);
  seq.Restore(snap);
  EXPECT_EQ(seq.length(), 10);
  for (int32_t id : b) e.Append(seq, {id});  // writes different rows into the shared pages
  seq.Restore(snap);
  Logits again;
  for (int32_t id : a) again.push_back(e.Append(seq, {id})[0]);
  EXPECT_EQ(first, again);  // bit-identical
}

TEST(ForwardConsistencyTest, SeveralGroupsEqualSeparateCalls) {
  ModelWeights w = MakeRandomWeights(TinyConfig(), 4, DType::kF32);
  Engine e(w);
  const std::vector<int32_t> p1 = RandomIds(33, 512, 1), p2 = RandomIds(7, 512, 2);
  const Logits want1 = e.Prompt(p1), want2 = e.Prompt(p2);
  SequenceState s1 = e.model->NewSequence(), s2 = e.model->NewSequence();
  ForwardBatch batch;
  AppendGroup g1{&s1, p1, 0, {0, 32}}, g2{&s2, p2, 0, {6}};
  batch.appends = {g1, g2};
  Result<ForwardLogits> out = e.model->Forward(batch, e.scratch);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->n_rows, 3);
  const Logits got = {{out->row(0), out->row(0) + 512},
                      {out->row(1), out->row(1) + 512},
                      {out->row(2), out->row(2) + 512}};
  EXPECT_LE(MaxRelDiff(got, {want1[0], want1[32], want2[6]}), kPathTolerance);
  EXPECT_EQ(s1.length(), 33);
  EXPECT_EQ(s2.length(), 7);
}

TEST(ForwardConsistencyTest, Bf16AndF16WeightsStayClose) {
  // Same draws rounded to 16 bits: logits move by the rounding noise, not by a layout error.
  // Every expert is active, so the rounding cannot flip a near-tied routing decision (which
  // would move a logit by O(1) without either result being wrong, architecture.md §6.13).
  ModelConfig c = TinyConfig();
  c.n_experts = 4;
  c.top_k = 4;
  const ModelWeights w32 = MakeRandomWeights(c, 6, DType::kF32);
  const std::vector<int32_t> ids = RandomIds(20, 512, 8);
  Engine e32(w32);
  const Logits ref = e32.Prompt(ids);
  for (DType dt : {DType::kBF16, DType::kF16}) {
    Engine e(MakeRandomWeights(c, 6, dt));
    EXPECT_LE(MaxRelDiff(e.Prompt(ids), ref), dt == DType::kBF16 ? 0.05 : 0.01) << DTypeName(dt);
  }
}

TEST(ForwardConsistencyTest, InvalidBatchesAreRejectedBeforeAnyChange) {
  ModelWeights w = MakeRandomWeights(TinyConfig(), 5, DType::kF32);
  Engine e(w);
  SequenceState seq = e.model->NewSequence();
  const std::vector<int32_t> bad_id = {1, 512};
  const std::vector<int32_t> ok = {1, 2};
  struct Case {
    AppendGroup group;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{&seq, bad_id, 0, {}}, "outside the vocabulary"},
      {{&seq, ok, 3, {}}, "!= sequence length"},
      {{&seq, ok, 0, {2}}, "logit row 2"},
      {{&seq, {}, 0, {}}, "no tokens"},
      {{nullptr, ok, 0, {}}, "no sequence state"},
  };
  for (const Case& c : cases) {
    ForwardBatch batch;
    batch.appends.push_back(c.group);
    Result<ForwardLogits> out = e.model->Forward(batch, e.scratch);
    ASSERT_FALSE(out.ok()) << c.needle;
    EXPECT_NE(out.status().message().find(c.needle), std::string::npos) << out.status().message();
    EXPECT_EQ(seq.length(), 0);
  }
  ForwardBatch twice;
  twice.appends = {AppendGroup{&seq, ok, 0, {}}, AppendGroup{&seq, ok, 0, {}}};
  EXPECT_FALSE(e.model->Forward(twice, e.scratch).ok());
}

TEST(ForwardConsistencyTest, QuantizedWeightsAreRejectedWithTheTensorName) {
  ModelWeights w = MakeRandomWeights(TinyConfig(), 5, DType::kF32);
  w.layers[1].gdn.z.dtype = DType::kQ5_K;  // a type the matmul cannot read
  ThreadPool pool(1);
  kernels::KernelContext ctx{pool, kernels::GetKernelTable(Isa::kRef)};
  Result<std::unique_ptr<Model>> m = Model::Create(w, ctx);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(m.status().message().find("blk.1.attn_gate"), std::string::npos)
      << m.status().message();
}

}  // namespace
}  // namespace clover::model
