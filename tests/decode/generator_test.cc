// The generation driver on random Clover models: I1-I5 of clover-spec.md §5 through the real
// forward, and AR decoding of the golden qwen35moe-tiny model.
#include "decode/generator.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "decode/registry.h"
#include "decode/request.h"
#include "fake_model.h"
#include "model/forward_test_util.h"
#include "model/loader.h"
#include "model/random_weights.h"

namespace clover::decode {
namespace {

using model::testing::Engine;

std::string Text(int32_t t) { return "<" + std::to_string(t) + ">"; }

std::vector<int32_t> Prompt(int n) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 37 + 11) % 500);
  return ids;
}

// (model name, block size, prompt length, shift_logits)
class GeneratorInvariantTest
    : public ::testing::TestWithParam<std::tuple<std::string, int, int, bool>> {};

TEST_P(GeneratorInvariantTest, DiffusionKeepsInvariantsAndCommitEqualsAr) {
  const auto [name, block, prompt_len, shift] = GetParam();
  Result<model::ModelConfig> cfg = model::RandomModelConfig(name);
  ASSERT_TRUE(cfg.ok());
  cfg->diffusion.shift_logits = shift;
  const model::ModelWeights w = model::MakeRandomWeights(*cfg, 3, DType::kF32);
  Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/16);
  ASSERT_NE(e.model, nullptr);
  const DecodeModelInfo info = DecodeModelInfoFromConfig(*cfg, cfg->vocab_size, std::nullopt);

  DecodeRequest req;
  req.kind = DecoderKind::kDiffusion;
  req.prompt = Prompt(prompt_len);
  req.block_size = block;
  req.max_tokens = 2 * block + 3;
  req.threshold = 0.3;
  req.keep_session = true;
  Result<std::unique_ptr<Decoder>> inner = CreateDecoder(req, info, Text);
  ASSERT_TRUE(inner.ok()) << inner.status().ToString();
  testing::RecordingDecoder dec(**inner);
  Generator gen(*e.model);
  Result<GenerateResult> r = gen.Run(dec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->finish.has_value());
  EXPECT_EQ(r->tokens.size(), static_cast<size_t>(req.max_tokens));
  EXPECT_EQ(testing::CheckInvariants(dec.trace, static_cast<int32_t>(*cfg->mask_token_id)), "");
  EXPECT_GT(r->counters.preview_passes, 0);
  EXPECT_EQ(r->forward_calls, r->counters.passes());
  for (int64_t experts : r->distinct_experts_sum) {
    EXPECT_GE(experts, r->forward_calls);  // every pass runs at least one expert per layer
    EXPECT_LE(experts, r->forward_calls * cfg->n_experts);
  }
  EXPECT_EQ(gen.state().length(), static_cast<int64_t>(dec.trace.state.size()));

  // I2: the committed state equals AR decoding of the same tokens (one token per forward), and
  // so do the next logits.
  model::SequenceState ar = e.model->NewSequence();
  e.Append(ar, req.prompt);
  for (size_t i = req.prompt.size(); i < dec.trace.state.size(); ++i)
    e.Append(ar, {dec.trace.state[i]});
  const std::vector<float> a = model::testing::StateBytes(gen.state(), w.config);
  const std::vector<float> b = model::testing::StateBytes(ar, w.config);
  ASSERT_EQ(a.size(), b.size());
  double max_state = 0;
  for (size_t i = 0; i < a.size(); ++i)
    max_state = std::max<double>(max_state, std::abs(a[i] - b[i]));
  EXPECT_LT(max_state, 1e-4);
  model::SequenceState& committed = const_cast<model::SequenceState&>(gen.state());
  EXPECT_LT(model::testing::MaxAbsDiff(e.Append(committed, {7}), e.Append(ar, {7})), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    RandomClover, GeneratorInvariantTest,
    ::testing::Combine(::testing::Values("clover-tiny", "clover-tiny-nopreview"),
                       ::testing::Values(8, 16, 32), ::testing::Values(32, 13), ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == "clover-tiny" ? "Preview" : "NoPreview") +
             "_B" + std::to_string(std::get<1>(info.param)) + "_P" +
             std::to_string(std::get<2>(info.param)) + (std::get<3>(info.param) ? "_Shift" : "");
    });

TEST(GeneratorTest, CancelStopsBetweenPasses) {
  Result<model::ModelConfig> cfg = model::RandomModelConfig("clover-tiny");
  ASSERT_TRUE(cfg.ok());
  const model::ModelWeights w = model::MakeRandomWeights(*cfg, 4, DType::kF32);
  Engine e(w);
  DecodeRequest req;
  req.prompt = Prompt(9);
  req.block_size = 8;
  req.max_tokens = 64;
  Result<std::unique_ptr<Decoder>> dec =
      CreateDecoder(req, DecodeModelInfoFromConfig(*cfg, cfg->vocab_size, std::nullopt), Text);
  ASSERT_TRUE(dec.ok());
  std::atomic<bool> cancel{false};
  Generator gen(*e.model);
  int steps = 0;
  Result<GenerateResult> r = gen.Run(
      **dec, [&](const StepEvents&) { cancel = ++steps == 3; }, &cancel);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  EXPECT_FALSE(r->finish.has_value());
  EXPECT_EQ(steps, 3);
}

// AR decoding of the golden qwen35moe-tiny model through the driver reproduces llama.cpp's greedy
// continuation.
TEST(GeneratorTest, ArReproducesLlamaCppGreedyTokens) {
  const std::string dir = std::string(CLOVER_SHARED_DIR) + "/golden/qwen35moe-tiny/";
  std::ifstream in(dir + "llamacpp_golden.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json g = nlohmann::json::parse(in);
  Result<model::ModelWeights> w = model::LoadModel(dir + "model-f32.gguf");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  Engine e(*w);
  const std::vector<int32_t> want = g["greedy_tokens"].get<std::vector<int32_t>>();
  DecodeRequest req;
  req.kind = DecoderKind::kAr;
  req.prompt = g["prompt"].get<std::vector<int32_t>>();
  req.max_tokens = static_cast<int64_t>(want.size());
  DecodeModelInfo info = DecodeModelInfoFromConfig(w->config, w->config.vocab_size, std::nullopt);
  info.eos_ids.clear();  // llama.cpp's continuation runs the full length
  Result<std::unique_ptr<Decoder>> dec = CreateDecoder(req, info, Text);
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  Generator gen(*e.model);
  Result<GenerateResult> r = gen.Run(**dec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tokens, want);
  EXPECT_EQ(r->counters.ar_passes, static_cast<int64_t>(want.size()) - 1);
}

}  // namespace
}  // namespace clover::decode
