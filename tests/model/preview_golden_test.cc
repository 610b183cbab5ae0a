// The preview pass and the commit against the float64 reference of ../shared/golden/clover-tiny
// (README §3.2: bidirectional block attention, both GDN scans, block coreset MoE).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/forward_test_util.h"
#include "model/loader.h"

namespace clover::model {
namespace {

using testing::Engine;
using testing::Logits;
using testing::MaxAbsDiff;

constexpr double kGoldenTolerance = 1e-4;  // the README's suggestion for an F32 engine

std::string Golden(const std::string& rel) {
  return std::string(CLOVER_SHARED_DIR) + "/golden/clover-tiny/" + rel;
}

nlohmann::json ReadGolden() {
  std::ifstream in(Golden("clover_golden.json"));
  EXPECT_TRUE(in.good()) << Golden("clover_golden.json");
  return nlohmann::json::parse(in);
}

class CloverTinyPreviewTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CloverTinyPreviewTest, PreviewCasesCoresetsAndCommitMatchReference) {
  const nlohmann::json g = ReadGolden();
  Result<ModelWeights> w = LoadModel(Golden(GetParam()));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->config.has_preview_tensors);
  Engine e(*w, 2, SelectIsa().value(), /*kv_page_size=*/16);  // prefix 20 spans a partial page
  ASSERT_NE(e.model, nullptr);
  const std::vector<int32_t> prefix = g["prefix"].get<std::vector<int32_t>>();
  SequenceState seq = e.model->NewSequence();
  EXPECT_LE(MaxAbsDiff(e.Append(seq, prefix), g["prefix_logits"].get<Logits>()), kGoldenTolerance);
  const std::vector<float> committed = testing::StateBytes(seq, w->config);

  for (const auto& [name, c] : g["cases"].items()) {
    SCOPED_TRACE(name);
    const std::string mode = c["preview_gdn"].get<std::string>();
    ASSERT_TRUE(
        e.model
            ->set_preview_gdn(mode == "causal" ? PreviewGdn::kCausal : PreviewGdn::kBidirectional)
            .ok());
    const std::vector<int32_t> block = c["block"].get<std::vector<int32_t>>();
    ForwardLogits raw;
    const Logits got = e.Preview(seq, block, &raw);
    EXPECT_LE(MaxAbsDiff(got, c["logits"].get<Logits>()), kGoldenTolerance);
    ASSERT_EQ(raw.coresets.size(), 1u);
    ASSERT_EQ(raw.coresets[0].size(), static_cast<size_t>(w->config.n_layers));
    for (int il = 0; il < w->config.n_layers; ++il) {
      std::vector<int32_t> want =
          c["coreset"][std::to_string(il)]["kept"].get<std::vector<int32_t>>();
      std::vector<int32_t> have = raw.coresets[0][il];
      std::sort(want.begin(), want.end());
      std::sort(have.begin(), have.end());
      EXPECT_EQ(have, want) << "layer " << il;
    }
    // I1: the committed state is untouched and a second identical preview is bit-identical.
    EXPECT_EQ(testing::StateBytes(seq, w->config), committed);
    EXPECT_EQ(e.Preview(seq, block), got);
  }

  const std::vector<int32_t> commit_block = g["commit"]["block"].get<std::vector<int32_t>>();
  const Logits commit = e.Append(seq, commit_block);
  const Logits want = g["commit"]["logits"].get<Logits>();
  EXPECT_LE(MaxAbsDiff(commit, Logits(want.end() - commit_block.size(), want.end())),
            kGoldenTolerance);
  EXPECT_EQ(testing::Argmax(commit.back()), g["commit"]["next_token_argmax"].get<int32_t>());
}

INSTANTIATE_TEST_SUITE_P(Files, CloverTinyPreviewTest, ::testing::Values("model-f32.gguf", "hf"),
                         [](const auto& info) {
                           return info.param == "hf" ? std::string("Hf") : std::string("Gguf");
                         });

}  // namespace
}  // namespace clover::model
