// The forward against llama.cpp's logits on the golden tiny models (GGUF and HF copies).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "model/forward_test_util.h"
#include "model/loader.h"

namespace clover::model {
namespace {

using testing::Engine;
using testing::Logits;
using testing::MaxAbsDiff;

// ../shared/golden/qwen35moe-tiny/README.md: an F32 engine agrees with llama.cpp (FA off, F32
// KV) to ~1e-5; 1e-4 is the suggested bound.
constexpr double kGoldenTolerance = 1e-4;

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::json::parse(in);
}

Logits ToLogits(const nlohmann::json& j) { return j.get<Logits>(); }

std::string Golden(const std::string& rel) {
  return std::string(CLOVER_SHARED_DIR) + "/golden/" + rel;
}

// Checks the prompt run as one batch and split at the golden's `split` against llama.cpp.
void ExpectPromptMatches(Engine& e, const nlohmann::json& g) {
  const std::vector<int32_t> prompt = g["prompt"].get<std::vector<int32_t>>();
  const int64_t split = g["split"].get<int64_t>();
  EXPECT_LE(MaxAbsDiff(e.Prompt(prompt), ToLogits(g["logits_batch"])), kGoldenTolerance);
  EXPECT_LE(MaxAbsDiff(e.Prompt(prompt, {split}), ToLogits(g["logits_chunked"])), kGoldenTolerance);
}

class QwenTinyGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(QwenTinyGoldenTest, MatchesLlamaCpp) {
  const nlohmann::json g = ReadJson(Golden("qwen35moe-tiny/llamacpp_golden.json"));
  Result<ModelWeights> w = LoadModel(Golden("qwen35moe-tiny/" + GetParam()));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  Engine e(*w);
  ASSERT_NE(e.model, nullptr);
  ExpectPromptMatches(e, g);
  const std::vector<int32_t> prompt = g["prompt"].get<std::vector<int32_t>>();

  // Greedy: one batch of the prompt, then one token at a time.
  SequenceState seq = e.model->NewSequence();
  Logits last = e.Append(seq, prompt);
  ASSERT_EQ(last.size(), prompt.size());
  const std::vector<int32_t> want = g["greedy_tokens"].get<std::vector<int32_t>>();
  const Logits want_steps = ToLogits(g["greedy_step_logits"]);
  std::vector<int32_t> got;
  int32_t next = testing::Argmax(last.back());
  for (size_t k = 0; k < want.size(); ++k) {
    got.push_back(next);
    Logits step = e.Append(seq, {next});
    ASSERT_EQ(step.size(), 1u);
    EXPECT_LE(MaxAbsDiff(step, {want_steps[k]}), kGoldenTolerance) << "step " << k;
    next = testing::Argmax(step[0]);
  }
  EXPECT_EQ(got, want);
}

// The debug hook's named activations line up with llama.cpp's graph tensors (same names, GDN
// v-heads in the same tiled order), so a mismatch can be traced to its layer.
TEST(QwenTinyGoldenTest, ActivationsMatchLlamaCppByName) {
  const nlohmann::json g = ReadJson(Golden("qwen35moe-tiny/llamacpp_golden.json"));
  Result<ModelWeights> w = LoadModel(Golden("qwen35moe-tiny/model-f32.gguf"));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  Engine e(*w);
  std::map<std::string, std::vector<float>> got;
  e.model->set_debug_hook(
      [&](std::string_view name, int layer, const float* data, int64_t rows, int64_t cols) {
        const std::string key =
            layer < 0 ? std::string(name) : std::string(name) + "-" + std::to_string(layer);
        got[key].assign(data, data + rows * cols);
      });
  e.Prompt(g["prompt"].get<std::vector<int32_t>>());
  const nlohmann::json& acts = g["activations_batch"];
  int compared = 0;
  for (const auto& [key, value] : got) {
    if (!acts.contains(key)) continue;
    const std::vector<float> want = acts[key]["data"].get<std::vector<float>>();
    ASSERT_EQ(want.size(), value.size()) << key;
    double max_diff = 0;
    for (size_t i = 0; i < want.size(); ++i)
      max_diff = std::max(max_diff, static_cast<double>(std::abs(want[i] - value[i])));
    EXPECT_LE(max_diff, kGoldenTolerance) << key;
    ++compared;
  }
  // Every llama.cpp name except the "(reshaped)" duplicates has a counterpart.
  int expected = 0;
  for (const auto& item : acts.items())
    expected += item.key().find("reshaped") == std::string::npos;
  EXPECT_EQ(compared, expected);
}

INSTANTIATE_TEST_SUITE_P(Files, QwenTinyGoldenTest, ::testing::Values("model-f32.gguf", "hf"),
                         [](const auto& info) { return info.param == "hf" ? "Hf" : "Gguf"; });

class CloverTinyCausalTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CloverTinyCausalTest, MatchesLlamaCpp) {
  const nlohmann::json g = ReadJson(Golden("clover-tiny/llamacpp_causal.json"));
  Result<ModelWeights> w = LoadModel(Golden("clover-tiny/" + GetParam()));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  Engine e(*w);
  ASSERT_NE(e.model, nullptr);
  ExpectPromptMatches(e, g);
}

INSTANTIATE_TEST_SUITE_P(Files, CloverTinyCausalTest,
                         ::testing::Values("base-qwen35moe.gguf", "model-f32.gguf", "hf"),
                         [](const auto& info) {
                           return info.param == "hf"               ? std::string("Hf")
                                  : info.param == "model-f32.gguf" ? std::string("CloverGguf")
                                                                   : std::string("BaseGguf");
                         });

}  // namespace
}  // namespace clover::model
