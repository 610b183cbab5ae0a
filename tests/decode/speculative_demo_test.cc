// Draft-self on the trained demo model (models/clover-demo): on many real prompts the output is
// greedy AR's token for token, with drafts accepted often enough that multi-row rollbacks and
// fully accepted rounds both run through the real forward.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "decode/generator.h"
#include "decode/registry.h"
#include "decode/request.h"
#include "model/forward_test_util.h"
#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace clover::decode {
namespace {

namespace fs = std::filesystem;

const fs::path kDemo = fs::path(CLOVER_SOURCE_DIR) / "models" / "clover-demo";

TEST(SpeculativeDemoTest, EqualsGreedyArOnTheHeldOutPrompts) {
  if (!fs::exists(kDemo / "eval_tasks.jsonl")) GTEST_SKIP() << "models/clover-demo is not there";
  Result<model::ModelWeights> weights = model::LoadModel(kDemo.string());
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::FromJsonFile((kDemo / "tokenizer.json").string());
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  model::testing::Engine engine(*weights, 2);
  const int32_t think_end = tok->TokenToId("</think>");
  const DecodeModelInfo info = DecodeModelInfoFromConfig(
      weights->config, tok->vocab_size(),
      think_end >= 0 ? std::optional<int32_t>(think_end) : std::nullopt);
  auto text = [&](int32_t id) {
    Result<std::string_view> b = tok->TokenBytes(id, /*skip_special=*/true);
    return b.ok() ? std::string(*b) : std::string();
  };

  std::ifstream suite(kDemo / "eval_tasks.jsonl");
  std::string line;
  int prompts = 0;
  int64_t drafted = 0, accepted = 0, ar_passes = 0, spec_forwards = 0;
  Generator gen(*engine.model);
  for (int i = 0; i < 60 && std::getline(suite, line); ++i) {
    const nlohmann::json task = nlohmann::json::parse(line);
    if (task.contains("tools")) continue;
    DecodeRequest ar;
    ar.kind = DecoderKind::kAr;
    ar.prompt = tok->Encode(task["prompt"].get<std::string>());
    ar.thinking = task["enable_thinking"].get<bool>();
    ar.max_tokens = 40;
    ar.penalties.presence = 0.0f;
    ar.penalties.frequency = 0.0f;
    ar.penalties.repetition = 1.0f;
    Result<GenerateResult> want = gen.Run(*CreateDecoder(ar, info, text).value());
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ar_passes += want->counters.passes();
    for (const bool fused : {false, true}) {
      DecodeRequest spec = ar;
      spec.kind = DecoderKind::kSpeculative;
      spec.fuse_commit = fused;
      Result<GenerateResult> got = gen.Run(*CreateDecoder(spec, info, text).value());
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(got->tokens, want->tokens) << "task " << i << (fused ? " (fused)" : "");
      drafted += got->counters.drafted;
      accepted += got->counters.draft_accepted;
      if (fused) spec_forwards += got->forward_calls;
    }
    ++prompts;
  }
  ASSERT_GE(prompts, 40);
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, drafted);
  RecordProperty("draft_acceptance_percent", static_cast<int>(100 * accepted / drafted));
  RecordProperty("ar_passes", static_cast<int>(ar_passes));
  RecordProperty("fused_speculative_forwards", static_cast<int>(spec_forwards));
}

}  // namespace
}  // namespace clover::decode
