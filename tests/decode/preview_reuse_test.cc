// Expert budget + live-row reuse through the real forward (clover-decoding.md §8, §9.1): R = 1
// decodes exactly as no reuse, R > 1 keeps clover-spec.md's invariants, and sequences batched
// together with reuse give what each gives alone.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>

#include "decode/batch_runner.h"
#include "decode/generator.h"
#include "decode/registry.h"
#include "decode/request.h"
#include "fake_model.h"
#include "model/forward_test_util.h"
#include "model/random_weights.h"

namespace clover::decode {
namespace {

using model::testing::Engine;

std::string Text(int32_t t) { return "<" + std::to_string(t) + ">"; }

using testing::RecordingDecoder;

std::vector<int32_t> Prompt(int n) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 37 + 11) % 500);
  return ids;
}

// (model name, block size, shift_logits)
class PreviewReuseTest : public ::testing::TestWithParam<std::tuple<std::string, int, bool>> {
 protected:
  void SetUp() override {
    const auto [name, block, shift] = GetParam();
    Result<model::ModelConfig> c = model::RandomModelConfig(name);
    ASSERT_TRUE(c.ok());
    c->diffusion.shift_logits = shift;
    cfg_ = *c;
    weights_ = model::MakeRandomWeights(cfg_, 5, DType::kF32);
    engine_ = std::make_unique<Engine>(weights_, 2, SelectIsa().value(), /*kv_page_size=*/16);
    info_ = DecodeModelInfoFromConfig(cfg_, cfg_.vocab_size, std::nullopt);
  }

  DecodeRequest Request(int reuse_passes, bool fuse_commit = false) const {
    DecodeRequest req;
    req.kind = DecoderKind::kDiffusion;
    req.prompt = Prompt(13);
    req.block_size = std::get<1>(GetParam());
    req.max_tokens = 3 * req.block_size;
    req.threshold = 0.9;  // random models are unsure: several passes per block
    req.keep_session = true;
    req.reuse_passes = reuse_passes;
    req.fuse_commit = fuse_commit;
    return req;
  }

  // Decodes `req` through a Generator, recording into `rec`; `state` gets the final sequence.
  GenerateResult Decode(const DecodeRequest& req, std::unique_ptr<RecordingDecoder>* rec,
                        std::vector<float>* state = nullptr) {
    Result<std::unique_ptr<Decoder>> inner = CreateDecoder(req, info_, Text);
    EXPECT_TRUE(inner.ok()) << inner.status().ToString();
    inners_.push_back(std::move(*inner));
    *rec = std::make_unique<RecordingDecoder>(*inners_.back());
    Generator gen(*engine_->model);
    Result<GenerateResult> r = gen.Run(**rec);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (state != nullptr) *state = model::testing::StateBytes(gen.state(), cfg_);
    return r.ok() ? *r : GenerateResult{};
  }

  model::ModelConfig cfg_;
  model::ModelWeights weights_;
  std::unique_ptr<Engine> engine_;
  DecodeModelInfo info_;
  std::vector<std::unique_ptr<Decoder>> inners_;
};

// The acceptance test: a refresh on every pass is no reuse, logit for logit.
TEST_P(PreviewReuseTest, EveryPassRefreshingEqualsNoReuse) {
  for (const bool fused : {false, true}) {
    std::unique_ptr<RecordingDecoder> off, one;
    const GenerateResult a = Decode(Request(0, fused), &off);
    const GenerateResult b = Decode(Request(1, fused), &one);
    EXPECT_EQ(a.tokens, b.tokens) << "fused " << fused;
    EXPECT_EQ(off->consumed, one->consumed) << "fused " << fused;
    EXPECT_EQ(a.counters.passes(), b.counters.passes());
    EXPECT_EQ(a.distinct_experts_sum, b.distinct_experts_sum);
    EXPECT_EQ(one->reuse_passes, 0);
  }
}

// With reuse the decoder still keeps I3-I5, the committed state is still AR decoding of the
// committed tokens (I2: commits always run in full), and reuse passes did happen.
TEST_P(PreviewReuseTest, ReuseKeepsTheInvariants) {
  std::unique_ptr<RecordingDecoder> rec;
  std::vector<float> state;
  const DecodeRequest req = Request(5);
  const GenerateResult r = Decode(req, &rec, &state);
  ASSERT_TRUE(r.finish.has_value());
  EXPECT_EQ(r.tokens.size(), static_cast<size_t>(req.max_tokens));
  EXPECT_EQ(testing::CheckInvariants(rec->trace, static_cast<int32_t>(*cfg_.mask_token_id)), "");
  EXPECT_GT(rec->reuse_passes, 0);

  model::SequenceState ar = engine_->model->NewSequence();
  engine_->Append(ar, req.prompt);
  for (size_t i = req.prompt.size(); i < rec->trace.state.size(); ++i)
    engine_->Append(ar, {rec->trace.state[i]});
  const std::vector<float> want = model::testing::StateBytes(ar, cfg_);
  ASSERT_EQ(state.size(), want.size());
  double max_diff = 0;
  for (size_t i = 0; i < state.size(); ++i)
    max_diff = std::max<double>(max_diff, std::abs(state[i] - want[i]));
  EXPECT_LT(max_diff, 1e-4);
}

// Each sequence has its own cache: stepped together, sequences decode as they do alone.
TEST_P(PreviewReuseTest, BatchedSequencesWithReuseDecodeAsAlone) {
  std::vector<DecodeRequest> reqs;
  for (int i = 0; i < 3; ++i) {
    DecodeRequest r = Request(3 + i);
    r.prompt = Prompt(7 + 5 * i);
    reqs.push_back(r);
  }
  std::vector<std::vector<int32_t>> alone;
  for (const DecodeRequest& r : reqs) {
    std::unique_ptr<RecordingDecoder> rec;
    alone.push_back(Decode(r, &rec).tokens);
  }
  BatchRunner runner(*engine_->model);
  std::vector<std::unique_ptr<Decoder>> decoders;
  std::map<BatchRunner::SequenceId, size_t> index;
  for (size_t i = 0; i < reqs.size(); ++i) {
    decoders.push_back(CreateDecoder(reqs[i], info_, Text).value());
    index[runner.Add(*decoders.back())] = i;
  }
  size_t done = 0;
  while (!runner.empty()) {
    for (BatchRunner::Done& d : runner.Step()) {
      ASSERT_TRUE(d.status.ok()) << d.status.ToString();
      EXPECT_EQ(d.result.tokens, alone[index[d.id]]) << "sequence " << index[d.id];
      ++done;
    }
  }
  EXPECT_EQ(done, reqs.size());
}

INSTANTIATE_TEST_SUITE_P(
    RandomClover, PreviewReuseTest,
    ::testing::Combine(::testing::Values("clover-tiny", "clover-tiny-nopreview"),
                       ::testing::Values(8, 16, 32), ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == "clover-tiny" ? "Preview" : "NoPreview") +
             "_B" + std::to_string(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_Shift" : "");
    });

}  // namespace
}  // namespace clover::decode
