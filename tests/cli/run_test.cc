// `clover run --prompt` on the embedded demo model (models/clover-demo), and `clover logits
// --block` on the clover-tiny golden.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli/cli_test_util.h"

namespace clover::cli {
namespace {

namespace fs = std::filesystem;
using testing::RunClover;

const fs::path kDemo = fs::path(CLOVER_SOURCE_DIR) / "models" / "clover-demo";

TEST(RunCommandTest, DemoModelAnswersAndPrintsStats) {
  if (!fs::exists(kDemo / "config.json") || !fs::exists(kDemo / "tokenizer.json"))
    GTEST_SKIP() << "models/clover-demo is not there yet (config.json + tokenizer.json)";
  for (const char* decoder : {"diffusion", "ar"}) {
    const auto [rc, out, err] =
        RunClover("run " + kDemo.string() + " --prompt 'What is the capital of France?' --no-think " +
                  "--max-tokens 24 --decoder " + decoder);
    EXPECT_EQ(rc, 0) << decoder;
    const std::regex stats(
        R"(\[(\d+) tokens, \d+ blocks, (\d+) passes \(\d+ preview \+ \d+ commit.*\), [0-9.]+ tokens/pass, [0-9.]+ tok/s)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, stats)) << decoder << ":\n" << out;
    EXPECT_GT(std::stoi(m[1]), 0) << decoder;
    EXPECT_GT(std::stoi(m[2]), 0) << decoder;
    // A fixed phrase the demo model learnt (tools/train/data.py); greedy decoding is deterministic.
    EXPECT_NE(out.find("The capital of France is Paris."), std::string::npos) << decoder << ":\n" << out;
  }
}

TEST(RunCommandTest, SpeculativeDecoderPrintsTheArAnswerInFewerPasses) {
  if (!fs::exists(kDemo / "config.json") || !fs::exists(kDemo / "tokenizer.json"))
    GTEST_SKIP() << "models/clover-demo is not there yet (config.json + tokenizer.json)";
  const std::string base = "run " + kDemo.string() +
                           " --prompt 'Reverse the word: planet' --no-think --max-tokens 24 ";
  const auto ar = RunClover(base + "--decoder ar");
  const auto spec = RunClover(base + "--decoder speculative --fused-commit --draft-max 8");
  ASSERT_EQ(ar.rc, 0);
  ASSERT_EQ(spec.rc, 0) << spec.err;
  const auto answer = [](const std::string& out) { return out.substr(0, out.rfind("\n[")); };
  EXPECT_EQ(answer(spec.out), answer(ar.out));
  const std::regex stats(R"(, (\d+) passes \(.* \+ (\d+) verify; (\d+)/(\d+) drafts accepted\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(spec.out, m, stats)) << spec.out;
  EXPECT_EQ(m[1], m[2]);  // fused: every pass is a verify
  EXPECT_LE(std::stoi(m[3]), std::stoi(m[4]));
}

TEST(RunCommandTest, MissingModelIsAClearError) {
  const auto [rc, out, err] = RunClover("run /nonexistent/model --prompt hi");
  // 1 or 2 from ReportError, not CLI11's usage codes (>= 100) and not a crash (-1).
  EXPECT_TRUE(rc == 1 || rc == 2) << rc;
}

TEST(LogitsBlockTest, PreviewMatchesCloverTinyGolden) {
  const std::string dir = std::string(CLOVER_SHARED_DIR) + "/golden/clover-tiny/";
  std::ifstream in(dir + "clover_golden.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json g = nlohmann::json::parse(in);
  const nlohmann::json& c = g["cases"]["iii_fixed_causal_gdn"];
  std::string prefix, block;
  for (int id : g["prefix"]) prefix += (prefix.empty() ? "" : ",") + std::to_string(id);
  for (int id : c["block"])
    block += (block.empty() ? "" : ",") + std::to_string(id == 511 ? -1 : id);
  const fs::path out =
      fs::temp_directory_path() / ("clover_preview_" + std::to_string(::getpid()) + ".json");
  const int rc = RunClover("logits " + dir + "model-f32.gguf --ids " + prefix + " --block " + block +
                           " --preview-gdn causal --out " + out.string())
                     .rc;
  ASSERT_EQ(rc, 0);
  std::ifstream got_in(out);
  const nlohmann::json got = nlohmann::json::parse(got_in);
  fs::remove(out);
  ASSERT_EQ(got["logits"].size(), 8u);
  double max_diff = 0;
  for (size_t r = 0; r < 8; ++r)
    for (size_t v = 0; v < 512; ++v)
      max_diff = std::max(
          max_diff, std::abs(got["logits"][r][v].get<double>() - c["logits"][r][v].get<double>()));
  EXPECT_LE(max_diff, 1e-4);
  ASSERT_EQ(got["coreset"].size(), 4u);
  for (int il = 0; il < 4; ++il)
    EXPECT_EQ(got["coreset"][il], c["coreset"][std::to_string(il)]["kept"]) << "layer " << il;
}

}  // namespace
}  // namespace clover::cli
