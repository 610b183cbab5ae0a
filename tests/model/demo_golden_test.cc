// The trained demo model (models/clover-demo) against the PyTorch logits that tools/train/export.py
// wrote to tests/fixtures/clover-demo/golden.json: prefill, preview with both GDN modes, commit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "model/forward_test_util.h"
#include "model/loader.h"

namespace clover::model {
namespace {

namespace fs = std::filesystem;
using testing::Engine;
using testing::Logits;
using testing::MaxAbsDiff;

constexpr double kGoldenTolerance = 1e-4;  // issue 8: C++ vs PyTorch in f32

const fs::path kRepoRoot = CLOVER_SOURCE_DIR;

// The fixture; CLOVER_DEMO_GOLDEN points at another export of the same format (e.g. a fresh one).
fs::path GoldenPath() {
  const char* env = std::getenv("CLOVER_DEMO_GOLDEN");
  if (env != nullptr && *env != '\0') return env;
  return fs::path(CLOVER_FIXTURES_DIR) / "clover-demo" / "golden.json";
}

// export.py records the model folder it wrote; a relative one is relative to the repository root.
fs::path ModelDir(const nlohmann::json& g) {
  const fs::path p = g["model"].get<std::string>();
  return p.is_absolute() ? p : kRepoRoot / p;
}

std::string FirstWord(const fs::path& file) {
  std::ifstream in(file);
  std::string w;
  in >> w;
  return w;
}

TEST(DemoGoldenTest, PrefillPreviewAndCommitMatchPyTorch) {
  const fs::path golden = GoldenPath();
  if (!fs::exists(golden)) GTEST_SKIP() << golden << " is not there yet (tools/train/export.py)";
  std::ifstream in(golden);
  const nlohmann::json g = nlohmann::json::parse(in);
  const fs::path dir = ModelDir(g);
  if (!fs::exists(dir / "model.safetensors"))
    GTEST_SKIP() << dir / "model.safetensors"
                 << " is not there yet";
  // The golden belongs to one set of weights; a retrained model needs a fresh export.
  const fs::path sha = dir / "model.safetensors.sha256";
  if (fs::exists(sha)) {
    ASSERT_EQ(FirstWord(sha), g["model_sha256"].get<std::string>())
        << golden << " was written for other weights than " << dir;
  }

  Result<ModelWeights> w = LoadModel(dir.string());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->config.has_preview_tensors) << dir << ": the demo model is a Clover model";
  ASSERT_EQ(w->config.mask_token_id.value_or(-1), g["mask_token_id"].get<int64_t>());
  Engine e(*w, 2);
  ASSERT_NE(e.model, nullptr);

  for (size_t ip = 0; ip < g["prompts"].size(); ++ip) {
    const nlohmann::json& p = g["prompts"][ip];
    SCOPED_TRACE("prompt " + std::to_string(ip) + ": " + p["prompt_text"].get<std::string>());
    const std::vector<int32_t> prompt = p["prompt_ids"].get<std::vector<int32_t>>();
    ASSERT_EQ(p["block_start_pos"].get<size_t>(), prompt.size());
    SequenceState seq = e.model->NewSequence();
    const Logits prefill = e.Append(seq, prompt);
    ASSERT_EQ(prefill.size(), prompt.size());
    const std::vector<int64_t> rows = p["prefill_rows"].get<std::vector<int64_t>>();
    Logits picked;
    for (int64_t r : rows) picked.push_back(prefill[static_cast<size_t>(r)]);
    EXPECT_LE(MaxAbsDiff(picked, p["prefill_logits"].get<Logits>()), kGoldenTolerance);

    for (const auto& [name, c] : p["cases"].items()) {
      SCOPED_TRACE(name);
      const std::string mode = c["preview_gdn"].get<std::string>();
      const Status set = e.model->set_preview_gdn(mode == "causal" ? PreviewGdn::kCausal
                                                                   : PreviewGdn::kBidirectional);
      ASSERT_TRUE(set.ok()) << set.ToString();
      const std::vector<int32_t> block = c["block"].get<std::vector<int32_t>>();
      ForwardLogits raw;
      const Logits got = e.Preview(seq, block, &raw);
      EXPECT_LE(MaxAbsDiff(got, c["logits"].get<Logits>()), kGoldenTolerance);
      ASSERT_EQ(raw.coresets.size(), 1u);
      ASSERT_EQ(raw.coresets[0].size(), static_cast<size_t>(w->config.n_layers));
      for (int il = 0; il < w->config.n_layers; ++il) {
        std::vector<int32_t> want =
            c["coreset"][std::to_string(il)]["kept"].get<std::vector<int32_t>>();
        std::vector<int32_t> have = raw.coresets[0][static_cast<size_t>(il)];
        std::sort(want.begin(), want.end());
        std::sort(have.begin(), have.end());
        EXPECT_EQ(have, want) << "layer " << il;
      }
    }

    const std::vector<int32_t> commit_block = p["commit"]["block"].get<std::vector<int32_t>>();
    const Logits commit = e.Append(seq, commit_block);
    EXPECT_LE(MaxAbsDiff(commit, p["commit"]["logits"].get<Logits>()), kGoldenTolerance);
    EXPECT_EQ(testing::Argmax(commit.back()), p["commit"]["next_token_argmax"].get<int32_t>());
  }
}

}  // namespace
}  // namespace clover::model
