// `clover convert` end to end: HF -> F32 GGUF reproduces the golden GGUF, quantized outputs load,
// verify and stay close to the source.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "cli/cli_test_util.h"
#include "io/gguf.h"
#include "model/forward_test_util.h"
#include "model/loader.h"

namespace clover::cli {
namespace {

using testing::RunClover;
using testing::RunResult;
using testing::ScratchDir;

const std::string kTiny = std::string(CLOVER_SHARED_DIR) + "/golden/qwen35moe-tiny/";

model::testing::Logits Logits(const std::string& path, const std::vector<int32_t>& ids) {
  Result<model::ModelWeights> w = model::LoadModel(path);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return {};
  model::testing::Engine e(*w);
  return e.Prompt(ids);
}

const std::vector<int32_t> kIds = {1, 17, 300, 42, 5, 511, 77, 256, 3, 128};

TEST(ConvertTest, HfToF32ReproducesTheGoldenGguf) {
  ScratchDir dir("convert_f32");
  const RunResult r = RunClover("convert " + kTiny + "hf -o " + (dir / "out.gguf") + " --type f32");
  ASSERT_EQ(r.rc, 0) << r.err;
  Result<std::shared_ptr<io::GgufFile>> got = io::GgufFile::Open(dir / "out.gguf");
  Result<std::shared_ptr<io::GgufFile>> want = io::GgufFile::Open(kTiny + "model-f32.gguf");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_EQ((*got)->tensors().size(), (*want)->tensors().size());
  for (const io::GgufTensor& t : (*want)->tensors()) {
    SCOPED_TRACE(t.name);
    const io::GgufTensor* g = (*got)->FindTensor(t.name);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->view.shape, t.view.shape);
    ASSERT_EQ(g->view.dtype, t.view.dtype);
    ASSERT_EQ(g->view.nbytes, t.view.nbytes);
    EXPECT_EQ(std::memcmp(g->view.data, t.view.data, t.view.nbytes), 0);
  }
  // The hyper-parameters read back identically (architecture.md §4 keys).
  for (const char* key :
       {"general.architecture", "qwen35moe.block_count", "qwen35moe.embedding_length",
        "qwen35moe.attention.head_count", "qwen35moe.attention.head_count_kv",
        "qwen35moe.attention.key_length", "qwen35moe.rope.dimension_count",
        "qwen35moe.expert_count", "qwen35moe.expert_used_count",
        "qwen35moe.expert_feed_forward_length", "qwen35moe.expert_shared_feed_forward_length",
        "qwen35moe.ssm.conv_kernel", "qwen35moe.ssm.state_size", "qwen35moe.ssm.group_count",
        "qwen35moe.ssm.time_step_rank", "qwen35moe.ssm.inner_size",
        "qwen35moe.full_attention_interval", "qwen35moe.vocab_size"}) {
    SCOPED_TRACE(key);
    ASSERT_NE((*got)->Find(key), nullptr);
    if (std::string(key) == "general.architecture") continue;
    EXPECT_EQ(*(*got)->GetInt(key), *(*want)->GetInt(key));
  }
  EXPECT_EQ(Logits(dir / "out.gguf", kIds), Logits(kTiny + "model-f32.gguf", kIds));
}

TEST(ConvertTest, QuantizedOutputsVerifyAndStayClose) {
  ScratchDir dir("convert_q");
  const model::testing::Logits f32 = Logits(kTiny + "model-f32.gguf", kIds);
  for (const char* type : {"q8_0", "q4_k_m", "mixed", "bf16"}) {
    SCOPED_TRACE(type);
    const std::string out = dir / (std::string(type) + ".gguf");
    RunResult r = RunClover("convert " + kTiny + "model-f32.gguf -o " + out + " --type " + type);
    ASSERT_EQ(r.rc, 0) << r.err;
    r = RunClover("verify " + out);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    Result<std::shared_ptr<io::GgufFile>> g = io::GgufFile::Open(out);
    ASSERT_TRUE(g.ok());
    const io::GgufTensor* expert = (*g)->FindTensor("blk.0.ffn_up_exps.weight");
    ASSERT_NE(expert, nullptr);
    // Hidden 64: the K formats fall back to Q8_0 (rows must hold 256); the router stays F32.
    EXPECT_EQ(expert->view.dtype, std::string(type) == "bf16" ? DType::kBF16 : DType::kQ8_0);
    EXPECT_EQ((*g)->FindTensor("blk.0.ffn_gate_inp.weight")->view.dtype, DType::kF32);
    // This random model moves its logits ~4x the weights' relative error, and rows whose expert
    // choice flips by O(10%) (tests/model/quantized_forward_test.cc): 8-bit weights and
    // activations move the median row by ~5% of its largest logit.
    const double rel = model::testing::MedianRowRelDiff(Logits(out, kIds), f32);
    RecordProperty(std::string(type) + "_median_row_rel_diff", std::to_string(rel));
    EXPECT_LE(rel, 0.1);
    EXPECT_GT(rel, 0.0);
  }
}

TEST(ConvertTest, BadTypeIsNamed) {
  ScratchDir dir("convert_bad");
  const RunResult r =
      RunClover("convert " + kTiny + "model-f32.gguf -o " + (dir / "x.gguf") + " --type q3");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("--type"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("q3"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace clover::cli
