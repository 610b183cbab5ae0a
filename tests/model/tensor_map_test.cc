// Tensor map strictness (missing / unexpected / wrong shape) and the alternative source layouts
// (per-expert HF experts, fused GGUF gate_up, MTP tensors ignored), on the golden models.
#include "model/tensor_map.h"

#include <gtest/gtest.h>

#include <cstring>

#include "model/loader.h"

namespace clover::model {
namespace {

const std::string kGolden = std::string(CLOVER_SHARED_DIR) + "/golden/";

OpenedModel Open(const std::string& rel) {
  auto m = OpenModel(kGolden + rel);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

Result<MapReport> Map(const OpenedModel& m, ModelWeights* w) {
  w->config = m.config;
  return MapTensors(m.tensors, m.scheme, w);
}

void ExpectError(const Status& s, StatusCode code, const std::vector<std::string>& substrings) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  for (const std::string& sub : substrings) EXPECT_NE(s.message().find(sub), std::string::npos) << s.ToString();
}

TEST(TensorMapTest, MissingTensor) {
  OpenedModel m = Open("qwen35moe-tiny/model-f32.gguf");
  m.tensors.erase("blk.2.ssm_alpha.weight");
  ModelWeights w;
  ExpectError(Map(m, &w).status(), StatusCode::kNotFound, {"'blk.2.ssm_alpha.weight'", "[4, 64]", "missing"});
}

TEST(TensorMapTest, UnexpectedTensor) {
  OpenedModel m = Open("qwen35moe-tiny/hf");
  SourceTensor extra = m.tensors.begin()->second;
  m.tensors["model.language_model.layers.0.linear_attn.extra.weight"] = extra;
  ModelWeights w;
  ExpectError(Map(m, &w).status(), StatusCode::kInvalidArgument,
              {"unexpected tensor 'model.language_model.layers.0.linear_attn.extra.weight'", "model.safetensors"});
}

TEST(TensorMapTest, WrongShape) {
  OpenedModel m = Open("clover-tiny/hf");
  SourceTensor& t = m.tensors.at("model.layers.1.linear_attn.in_proj_z.weight");
  t.view.shape = {32, 128};
  ModelWeights w;
  ExpectError(Map(m, &w).status(), StatusCode::kInvalidArgument,
              {"'model.layers.1.linear_attn.in_proj_z.weight'", "expected shape [64, 64]", "found [32, 128]"});
}

TEST(TensorMapTest, PartialPreviewTensorsAreAnError) {
  OpenedModel m = Open("clover-tiny/model-f32.gguf");
  m.tensors.erase("blk.1.ssm_mix_bwd");
  ModelWeights w;
  ExpectError(Map(m, &w).status(), StatusCode::kNotFound, {"'blk.1.ssm_mix_bwd'", "preview"});
}

TEST(TensorMapTest, MtpAndVisionTensorsAreIgnored) {
  OpenedModel hf = Open("qwen35moe-tiny/hf");
  const SourceTensor any = hf.tensors.begin()->second;
  hf.tensors["mtp.fc.weight"] = any;
  hf.tensors["model.visual.blocks.0.attn.qkv.weight"] = any;
  ModelWeights w;
  auto report = Map(hf, &w);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->ignored.size(), 2u);

  OpenedModel gguf = Open("qwen35moe-tiny/model-f32.gguf");
  gguf.tensors["blk.4.nextn.eh_proj.weight"] = any;
  ModelWeights w2;
  ExpectError(Map(gguf, &w2).status(), StatusCode::kInvalidArgument, {"unexpected tensor 'blk.4.nextn.eh_proj.weight'"});
  gguf.config.mtp_layers = 1;
  ModelWeights w3;
  auto r3 = Map(gguf, &w3);
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  EXPECT_EQ(r3->ignored, (std::vector<std::string>{"blk.4.nextn.eh_proj.weight"}));
}

// Splits the stacked HF experts of every layer into per-expert tensors (views into the same bytes).
TEST(TensorMapTest, PerExpertHfTensorsEqualStacked) {
  OpenedModel m = Open("qwen35moe-tiny/hf");
  ModelWeights stacked;
  ASSERT_TRUE(Map(m, &stacked).ok());
  const ModelConfig& c = m.config;
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string p = "model.language_model.layers." + std::to_string(i) + ".mlp.experts.";
    const TensorView gu = m.tensors.at(p + "gate_up_proj").view;
    const TensorView down = m.tensors.at(p + "down_proj").view;
    m.tensors.erase(p + "gate_up_proj");
    m.tensors.erase(p + "down_proj");
    const uint64_t row = 4 * c.hidden;
    for (int e = 0; e < c.n_experts; ++e) {
      const std::string q = p + std::to_string(e) + ".";
      const uint8_t* base = gu.bytes() + e * 2 * c.expert_ffn * row;
      m.tensors[q + "gate_proj.weight"] = {TensorView{DType::kF32, {c.expert_ffn, c.hidden}, base, c.expert_ffn * row}, "x"};
      m.tensors[q + "up_proj.weight"] = {
          TensorView{DType::kF32, {c.expert_ffn, c.hidden}, base + c.expert_ffn * row, c.expert_ffn * row}, "x"};
      const uint64_t dbytes = 4ull * c.hidden * c.expert_ffn;
      m.tensors[q + "down_proj.weight"] = {TensorView{DType::kF32, {c.hidden, c.expert_ffn}, down.bytes() + e * dbytes, dbytes}, "x"};
    }
  }
  ModelWeights per_expert;
  auto r = Map(m, &per_expert);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (int i = 0; i < c.n_layers; ++i) {
    for (int e = 0; e < c.n_experts; ++e) {
      EXPECT_EQ(per_expert.layers[i].moe.expert_gate[e].data, stacked.layers[i].moe.expert_gate[e].data);
      EXPECT_EQ(per_expert.layers[i].moe.expert_up[e].data, stacked.layers[i].moe.expert_up[e].data);
      EXPECT_EQ(per_expert.layers[i].moe.expert_down[e].data, stacked.layers[i].moe.expert_down[e].data);
    }
  }
  m.tensors.erase("model.language_model.layers.2.mlp.experts.5.up_proj.weight");
  ModelWeights broken;
  ExpectError(Map(m, &broken).status(), StatusCode::kNotFound, {"experts.5.up_proj.weight"});
}

TEST(TensorMapTest, FusedGgufGateUpEqualsSplit) {
  OpenedModel m = Open("qwen35moe-tiny/model-f32.gguf");
  ModelWeights split;
  ASSERT_TRUE(Map(m, &split).ok());
  const ModelConfig& c = m.config;
  std::vector<std::vector<uint8_t>> buffers;
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const TensorView g = m.tensors.at(p + "ffn_gate_exps.weight").view;
    const TensorView u = m.tensors.at(p + "ffn_up_exps.weight").view;
    const uint64_t per = g.nbytes / c.n_experts;
    std::vector<uint8_t> fused;
    for (int e = 0; e < c.n_experts; ++e) {
      fused.insert(fused.end(), g.bytes() + e * per, g.bytes() + (e + 1) * per);
      fused.insert(fused.end(), u.bytes() + e * per, u.bytes() + (e + 1) * per);
    }
    buffers.push_back(std::move(fused));
    m.tensors.erase(p + "ffn_gate_exps.weight");
    m.tensors.erase(p + "ffn_up_exps.weight");
    m.tensors[p + "ffn_gate_up_exps.weight"] = {
        TensorView{DType::kF32, {c.n_experts, 2 * c.expert_ffn, c.hidden}, buffers.back().data(), buffers.back().size()},
        "x"};
  }
  ModelWeights fused;
  auto r = Map(m, &fused);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const uint64_t nbytes = 4ull * c.expert_ffn * c.hidden;
  for (int i = 0; i < c.n_layers; ++i) {
    for (int e = 0; e < c.n_experts; ++e) {
      EXPECT_EQ(std::memcmp(fused.layers[i].moe.expert_gate[e].data, split.layers[i].moe.expert_gate[e].data, nbytes), 0);
      EXPECT_EQ(std::memcmp(fused.layers[i].moe.expert_up[e].data, split.layers[i].moe.expert_up[e].data, nbytes), 0);
    }
  }
}

TEST(TensorMapTest, NormsAndDecayAreConvertedToF32) {
  OpenedModel m = Open("qwen35moe-tiny/hf");
  // Store a zero-centred norm as BF16 zeros: canonical must be F32 ones.
  std::vector<uint16_t> zeros(64, 0);
  m.tensors.at("model.language_model.norm.weight").view = TensorView{DType::kBF16, {64}, zeros.data(), 128};
  ModelWeights w;
  ASSERT_TRUE(Map(m, &w).ok());
  ASSERT_EQ(w.output_norm.dtype, DType::kF32);
  for (int k = 0; k < 64; ++k) EXPECT_EQ(w.output_norm.f32()[k], 1.0f);
}

TEST(TensorMapTest, ForEachCanonicalTensorSkipsTiedOutput) {
  OpenedModel m = Open("qwen35moe-tiny/model-f32.gguf");
  m.tensors.erase("output.weight");
  m.config.tie_embeddings = true;
  ModelWeights w;
  ASSERT_TRUE(Map(m, &w).ok());
  EXPECT_EQ(w.output.data, w.embed.data);
  int outputs = 0;
  ForEachCanonicalTensor(w, [&](const std::string& name, const TensorView&) { outputs += name == "output"; });
  EXPECT_EQ(outputs, 0);
}

}  // namespace
}  // namespace clover::model
