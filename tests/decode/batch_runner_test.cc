// BatchRunner on a random Clover model: sequences stepped together give what each gives alone,
// a cancelled or failing sequence leaves the others untouched.
#include "decode/batch_runner.h"

#include <gtest/gtest.h>

#include "decode/generator.h"
#include "decode/registry.h"
#include "decode/request.h"
#include "model/forward_test_util.h"
#include "model/random_weights.h"

namespace clover::decode {
namespace {

using model::testing::Engine;

std::string Text(int32_t t) { return "<" + std::to_string(t) + ">"; }

model::ModelConfig SmallContextConfig() {
  model::ModelConfig c = model::RandomModelConfig("clover-tiny").value();
  c.max_context = 160;
  return c;
}

struct Fixture {
  Fixture()
      : cfg(SmallContextConfig()),
        weights(model::MakeRandomWeights(cfg, 11, DType::kF32)),
        engine(weights, 2, SelectIsa().value(), /*kv_page_size=*/16),
        info(DecodeModelInfoFromConfig(cfg, cfg.vocab_size, std::nullopt)) {}

  // Requests of both decoders, several block sizes and prompt lengths.
  std::vector<DecodeRequest> Requests() const {
    std::vector<DecodeRequest> out;
    for (int i = 0; i < 5; ++i) {
      DecodeRequest r;
      r.kind = i == 3 ? DecoderKind::kAr : DecoderKind::kDiffusion;
      for (int j = 0; j < 5 + 7 * i; ++j) r.prompt.push_back((j * 31 + i * 17 + 5) % 400);
      r.block_size = i % 2 == 0 ? 8 : 16;
      r.threshold = 0.3;
      r.max_tokens = 20 + 4 * i;
      out.push_back(r);
    }
    return out;
  }

  std::unique_ptr<Decoder> MakeDecoder(const DecodeRequest& r) const {
    Result<std::unique_ptr<Decoder>> d = CreateDecoder(r, info, Text);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return std::move(*d);
  }

  model::ModelConfig cfg;
  model::ModelWeights weights;
  Engine engine;
  DecodeModelInfo info;
};

// Runs the runner until every sequence has left; returns the Done records by id.
std::map<BatchRunner::SequenceId, BatchRunner::Done> Drain(BatchRunner& runner, int max_steps = 10000) {
  std::map<BatchRunner::SequenceId, BatchRunner::Done> out;
  for (int step = 0; !runner.empty() && step < max_steps; ++step)
    for (BatchRunner::Done& d : runner.Step()) out.emplace(d.id, std::move(d));
  return out;
}

TEST(BatchRunnerTest, BatchedSequencesMatchSequentialRuns) {
  Fixture f;
  const std::vector<DecodeRequest> reqs = f.Requests();
  std::vector<GenerateResult> alone;
  for (const DecodeRequest& r : reqs) {
    std::unique_ptr<Decoder> d = f.MakeDecoder(r);
    Generator gen(*f.engine.model);
    Result<GenerateResult> res = gen.Run(*d);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    alone.push_back(std::move(*res));
  }

  BatchRunner runner(*f.engine.model);
  std::vector<std::unique_ptr<Decoder>> decoders;
  std::vector<BatchRunner::SequenceId> ids;
  std::vector<std::string> streamed(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    decoders.push_back(f.MakeDecoder(reqs[i]));
    ids.push_back(runner.Add(*decoders.back(), [&streamed, i](const StepEvents& ev) { streamed[i] += ev.text; }));
  }
  EXPECT_EQ(runner.active(), reqs.size());
  auto done = Drain(runner);
  ASSERT_EQ(done.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    const BatchRunner::Done& d = done.at(ids[i]);
    ASSERT_TRUE(d.status.ok()) << d.status.ToString();
    EXPECT_EQ(d.result.tokens, alone[i].tokens) << "request " << i;
    EXPECT_EQ(d.result.finish, alone[i].finish) << "request " << i;
    EXPECT_EQ(d.result.counters.passes(), alone[i].counters.passes()) << "request " << i;
    EXPECT_EQ(streamed[i], alone[i].text) << "request " << i;
    EXPECT_FALSE(d.result.cancelled);
  }
}

// Fused commit + preview (clover-decoding.md §6.1) changes how many forwards run, not what is
// generated: one forward fewer per block after the first.
TEST(BatchRunnerTest, FusedCommitGivesTheSameOutputInFewerForwards) {
  Fixture f;
  for (const bool shift : {false, true})
  for (const DecodeRequest& r : f.Requests()) {
    if (r.kind != DecoderKind::kDiffusion) continue;
    DecodeRequest rf = r;
    rf.fuse_commit = true;
    DecodeModelInfo info = f.info;
    info.shift_logits = shift;
    std::unique_ptr<Decoder> plain_decoder = CreateDecoder(r, info, Text).value();
    std::unique_ptr<Decoder> fused_decoder = CreateDecoder(rf, info, Text).value();
    Generator plain(*f.engine.model);
    Generator fused(*f.engine.model);
    Result<GenerateResult> a = plain.Run(*plain_decoder);
    Result<GenerateResult> b = fused.Run(*fused_decoder);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->tokens, b->tokens);
    EXPECT_EQ(a->counters.passes(), b->counters.passes());
    ASSERT_GE(a->counters.blocks, 2) << "the request should span several blocks";
    // Every commit is followed by the next block's first preview (the last block is not
    // committed), so each one saves a forward.
    EXPECT_EQ(b->forward_calls, a->forward_calls - a->counters.commit_passes);
    EXPECT_EQ(model::testing::StateBytes(plain.state(), f.cfg), model::testing::StateBytes(fused.state(), f.cfg));
  }
}

// Draft-self through the real forward: rejected rows are cut off the state by
// Model::TruncateAppend, and the output is greedy AR's token for token, alone or batched with
// other sequences, with and without the draft fused into the verify pass.
TEST(BatchRunnerTest, SpeculativeDecodingEqualsArThroughTheForward) {
  Fixture f;
  for (const bool shift : {false, true}) {
    DecodeModelInfo info = f.info;
    info.shift_logits = shift;
    std::vector<DecodeRequest> ar_reqs;
    std::vector<GenerateResult> ar_results;
    for (DecodeRequest r : f.Requests()) {
      r.kind = DecoderKind::kAr;
      std::unique_ptr<Decoder> d = CreateDecoder(r, info, Text).value();
      Generator gen(*f.engine.model);
      Result<GenerateResult> res = gen.Run(*d);
      ASSERT_TRUE(res.ok()) << res.status().ToString();
      ar_reqs.push_back(r);
      ar_results.push_back(std::move(*res));
    }
    for (const bool fused : {false, true}) {
      SCOPED_TRACE(std::string(shift ? "shifted" : "unshifted") + (fused ? ", fused" : ""));
      BatchRunner runner(*f.engine.model);
      std::vector<std::unique_ptr<Decoder>> decoders;
      std::vector<BatchRunner::SequenceId> ids;
      for (DecodeRequest r : ar_reqs) {
        r.kind = DecoderKind::kSpeculative;
        r.fuse_commit = fused;
        r.speculative.draft_min = 2;
        r.speculative.draft_max = 8;
        decoders.push_back(CreateDecoder(r, info, Text).value());
        ids.push_back(runner.Add(*decoders.back()));
      }
      auto done = Drain(runner);
      ASSERT_EQ(done.size(), ar_reqs.size());
      int64_t drafted = 0, accepted = 0;
      for (size_t i = 0; i < ids.size(); ++i) {
        const BatchRunner::Done& d = done.at(ids[i]);
        ASSERT_TRUE(d.status.ok()) << d.status.ToString();
        EXPECT_EQ(d.result.tokens, ar_results[i].tokens) << "request " << i;
        EXPECT_EQ(d.result.finish, ar_results[i].finish) << "request " << i;
        drafted += d.result.counters.drafted;
        accepted += d.result.counters.draft_accepted;
      }
      // Random weights: most drafts are wrong, so rollbacks ran (speculative_demo_test.cc covers
      // accepted drafts on the trained model).
      EXPECT_GT(drafted, accepted);
    }
  }
}

TEST(BatchRunnerTest, CancelledSequenceLeavesOthersUnchanged) {
  Fixture f;
  const std::vector<DecodeRequest> reqs = f.Requests();
  std::unique_ptr<Decoder> solo = f.MakeDecoder(reqs[0]);
  Generator gen(*f.engine.model);
  Result<GenerateResult> want = gen.Run(*solo);
  ASSERT_TRUE(want.ok());

  BatchRunner runner(*f.engine.model);
  std::unique_ptr<Decoder> a = f.MakeDecoder(reqs[0]);
  std::unique_ptr<Decoder> b = f.MakeDecoder(reqs[1]);
  const auto ia = runner.Add(*a);
  const auto ib = runner.Add(*b);
  runner.Step();
  runner.Step();
  EXPECT_TRUE(runner.Cancel(ib));
  EXPECT_FALSE(runner.Cancel(ib));
  EXPECT_EQ(runner.active(), 1u);
  auto done = Drain(runner);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_TRUE(done.at(ib).result.cancelled);
  EXPECT_FALSE(done.at(ib).result.finish.has_value());
  EXPECT_EQ(done.at(ia).result.tokens, want->tokens);
}

TEST(BatchRunnerTest, FailingSequenceFailsAlone) {
  Fixture f;
  const std::vector<DecodeRequest> reqs = f.Requests();
  // A prompt as long as the context: its prefill passes, its first block cannot fit.
  DecodeRequest too_long = reqs[0];
  too_long.prompt.assign(static_cast<size_t>(f.cfg.max_context), 7);
  BatchRunner runner(*f.engine.model);
  std::unique_ptr<Decoder> good = f.MakeDecoder(reqs[2]);
  std::unique_ptr<Decoder> bad = f.MakeDecoder(too_long);
  const auto ig = runner.Add(*good);
  const auto ib = runner.Add(*bad);
  auto done = Drain(runner);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_FALSE(done.at(ib).status.ok());
  EXPECT_TRUE(done.at(ig).status.ok()) << done.at(ig).status.ToString();
  EXPECT_TRUE(done.at(ig).result.finish.has_value());
}

}  // namespace
}  // namespace clover::decode
