// `clover synth` end to end: the files load, verify and run; shapes and keys follow the config.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "io/gguf.h"
#include "model/forward_test_util.h"
#include "model/loader.h"
#include "model/random_weights.h"
#include "model/tensor_map.h"

namespace clover::cli {
namespace {

using testing::RunClover;
using testing::RunResult;
using testing::ScratchDir;

// The 35B shapes with 8 experts, a 4096-token vocabulary and one layer per kind: small enough to
// write in a test, wide enough to check every real matrix shape.
TEST(SynthTest, Qwen36ShapesAndKeys) {
  ScratchDir dir("synth_qwen36");
  const std::string out = dir / "q.gguf";
  const RunResult r = RunClover("synth -o " + out +
                                " --preset qwen36-35b-a3b --layers 4 --set n_experts=8 "
                                "--set vocab_size=4096 --type q8_0 --seed 3");
  ASSERT_EQ(r.rc, 0) << r.err;
  Result<std::shared_ptr<io::GgufFile>> g = io::GgufFile::Open(out);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const io::GgufFile& f = **g;
  EXPECT_EQ(*f.GetString("general.architecture"), "qwen35moe");
  EXPECT_EQ(*f.GetInt("qwen35moe.embedding_length"), 2048);
  EXPECT_EQ(*f.GetInt("qwen35moe.block_count"), 4);
  EXPECT_EQ(*f.GetInt("qwen35moe.ssm.inner_size"), 4096);
  EXPECT_EQ(*f.GetInt("qwen35moe.attention.key_length"), 256);
  EXPECT_EQ(*f.GetInt("qwen35moe.expert_count"), 8);
  // architecture.md §4 shapes (outermost first) and the q8_0 policy's types.
  const struct {
    const char* name;
    std::vector<int64_t> shape;
    DType dtype;
  } want[] = {
      {"token_embd.weight", {4096, 2048}, DType::kQ8_0},
      {"blk.0.attn_qkv.weight", {8192, 2048}, DType::kQ8_0},
      {"blk.0.attn_gate.weight", {4096, 2048}, DType::kQ8_0},
      {"blk.0.ssm_out.weight", {2048, 4096}, DType::kQ8_0},
      {"blk.0.ssm_conv1d.weight", {8192, 4}, DType::kF32},
      {"blk.0.ssm_a", {32}, DType::kF32},
      {"blk.0.ssm_beta.weight", {32, 2048}, DType::kF32},
      {"blk.3.attn_q.weight", {8192, 2048}, DType::kQ8_0},
      {"blk.3.attn_k.weight", {512, 2048}, DType::kQ8_0},
      {"blk.3.attn_output.weight", {2048, 4096}, DType::kQ8_0},
      {"blk.3.ffn_gate_inp.weight", {8, 2048}, DType::kF32},
      {"blk.3.ffn_gate_exps.weight", {8, 512, 2048}, DType::kQ8_0},
      {"blk.3.ffn_down_exps.weight", {8, 2048, 512}, DType::kQ8_0},
      {"blk.3.ffn_up_shexp.weight", {512, 2048}, DType::kQ8_0},
      {"blk.3.ffn_gate_inp_shexp.weight", {1, 2048}, DType::kF32},
  };
  for (const auto& w : want) {
    SCOPED_TRACE(w.name);
    const io::GgufTensor* t = f.FindTensor(w.name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->view.shape, w.shape);
    EXPECT_EQ(t->view.dtype, w.dtype);
  }
  EXPECT_EQ(RunClover("verify " + out).rc, 0);
}

// A tiny Clover model at every policy: loads, verifies, and its logits stay O(1) and finite.
TEST(SynthTest, TinyCloverRunsAtEveryType) {
  ScratchDir dir("synth_tiny");
  for (const char* type : {"f32", "bf16", "q8_0", "q4_k_m", "mixed"}) {
    SCOPED_TRACE(type);
    const std::string out = dir / (std::string(type) + ".gguf");
    RunResult r = RunClover("synth -o " + out + " --preset tiny --clover --set hidden=256 " +
                            "--set expert_ffn=256 --set shared_ffn=256 --set dk=64 --set dv=64 " +
                            "--set head_dim=64 --type " + type);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(RunClover("verify " + out).rc, 0);
    Result<model::ModelWeights> w = model::LoadModel(out);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_EQ(w->config.family, model::ModelFamily::kCloverMoe);
    EXPECT_TRUE(w->config.has_preview_tensors);
    model::testing::Engine e(*w);
    ASSERT_NE(e.model, nullptr);
    const model::testing::Logits l = e.Prompt({1, 2, 3, 4, 5, 6, 7, 8});
    double sq = 0;
    int64_t n = 0;
    for (const auto& row : l)
      for (float v : row) {
        ASSERT_TRUE(std::isfinite(v));
        sq += double{v} * v;
        ++n;
      }
    const double rms = std::sqrt(sq / n);
    EXPECT_GT(rms, 0.1);
    EXPECT_LT(rms, 10.0);
  }
}

// The file holds exactly the weights synth draws part by part (synth.cc, PartwiseDraw): the
// embeddings, final norm and head of MakeRandomWeights without layers from the seed, layer i as
// the layer of a one-layer model of its kind from seed + 1 + i. Same bytes, same logits.
TEST(SynthTest, F32FileHoldsTheWeightsDrawnPartByPart) {
  ScratchDir dir("synth_same");
  const std::string out = dir / "tiny.gguf";
  ASSERT_EQ(RunClover("synth -o " + out + " --preset tiny --type f32 --seed 5").rc, 0);
  Result<model::ModelWeights> file = model::LoadModel(out);
  ASSERT_TRUE(file.ok()) << file.status().ToString();

  const model::ModelConfig c = model::RandomModelConfig("tiny").value();
  model::ModelConfig no_layers = c;
  no_layers.n_layers = 0;
  no_layers.layer_kinds.clear();
  model::ModelWeights memory = model::MakeRandomWeights(no_layers, 5, DType::kF32);
  memory.config = c;
  std::vector<model::ModelWeights> drawn_layers;  // own the layers' data
  for (int i = 0; i < c.n_layers; ++i) {
    model::ModelConfig one = c;
    one.n_layers = 1;
    one.layer_kinds = {c.layer_kinds[i]};
    one.vocab_size = 1;
    drawn_layers.push_back(model::MakeRandomWeights(one, 5 + 1 + i, DType::kF32));
    memory.layers.push_back(drawn_layers.back().layers[0]);
  }

  std::map<std::string, TensorView> want;
  model::ForEachCanonicalTensor(memory, [&](const std::string& name, const TensorView& v) {
    want.emplace(name, v);
  });
  size_t seen = 0;
  model::ForEachCanonicalTensor(*file, [&](const std::string& name, const TensorView& v) {
    SCOPED_TRACE(name);
    ++seen;
    auto it = want.find(name);
    ASSERT_NE(it, want.end());
    ASSERT_EQ(v.nbytes, it->second.nbytes);
    EXPECT_EQ(0, std::memcmp(v.data, it->second.data, v.nbytes));
  });
  EXPECT_EQ(seen, want.size());

  const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6};
  model::testing::Engine a(*file), b(memory);
  ASSERT_NE(a.model, nullptr);
  ASSERT_NE(b.model, nullptr);
  EXPECT_EQ(a.Prompt(ids), b.Prompt(ids));
}

TEST(SynthTest, UnknownOverrideIsNamed) {
  ScratchDir dir("synth_bad");
  const RunResult r = RunClover("synth -o " + (dir / "x.gguf") + " --preset tiny --set widht=3");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("widht"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace clover::cli
