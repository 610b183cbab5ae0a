// LoadModel on the goldens: HF safetensors and GGUF give the same ModelConfig and canonical tensors.
#include "model/loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "io/gguf_writer.h"
#include "model/config_loader.h"
#include "model/tensor_map.h"

namespace clover::model {
namespace {

const std::string kGolden = std::string(CLOVER_SHARED_DIR) + "/golden/";

void ExpectSameConfig(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.family, b.family);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.hidden, b.hidden);
  EXPECT_EQ(a.n_layers, b.n_layers);
  EXPECT_EQ(a.layer_kinds, b.layer_kinds);
  EXPECT_EQ(a.full_attention_interval, b.full_attention_interval);
  EXPECT_EQ(a.rms_eps, b.rms_eps);
  EXPECT_EQ(a.max_context, b.max_context);
  EXPECT_EQ(a.tie_embeddings, b.tie_embeddings);
  EXPECT_EQ(a.mtp_layers, b.mtp_layers);
  EXPECT_EQ(a.n_head, b.n_head);
  EXPECT_EQ(a.n_head_kv, b.n_head_kv);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.rope_dim, b.rope_dim);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.rope_sections, b.rope_sections);
  EXPECT_EQ(a.hk, b.hk);
  EXPECT_EQ(a.hv, b.hv);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dv, b.dv);
  EXPECT_EQ(a.conv_kernel, b.conv_kernel);
  EXPECT_EQ(a.n_experts, b.n_experts);
  EXPECT_EQ(a.top_k, b.top_k);
  EXPECT_EQ(a.expert_ffn, b.expert_ffn);
  EXPECT_EQ(a.shared_ffn, b.shared_ffn);
  EXPECT_EQ(a.n_shared_experts, b.n_shared_experts);
  EXPECT_EQ(a.mask_token_id, b.mask_token_id);
  EXPECT_EQ(a.bos_token_id, b.bos_token_id);
  EXPECT_EQ(a.pad_token_id, b.pad_token_id);
  EXPECT_EQ(a.eos_token_ids, b.eos_token_ids);
  EXPECT_EQ(a.diffusion.block_size, b.diffusion.block_size);
  EXPECT_EQ(a.diffusion.shift_logits, b.diffusion.shift_logits);
  EXPECT_EQ(a.diffusion.block_alignment, b.diffusion.block_alignment);
  EXPECT_EQ(a.diffusion.preview_gdn, b.diffusion.preview_gdn);
  EXPECT_EQ(a.diffusion.coreset_mass, b.diffusion.coreset_mass);
  EXPECT_EQ(a.diffusion.coreset_min_experts, b.diffusion.coreset_min_experts);
  EXPECT_EQ(a.diffusion.preview_topk, b.diffusion.preview_topk);
  EXPECT_EQ(a.has_preview_tensors, b.has_preview_tensors);
}

std::map<std::string, TensorView> Canonical(const ModelWeights& w) {
  std::map<std::string, TensorView> out;
  ForEachCanonicalTensor(w, [&](const std::string& name, const TensorView& v) { out[name] = v; });
  return out;
}

int32_t Ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::abs(ia - ib);
}

// Every canonical tensor of the HF load equals the GGUF one bit for bit, except ssm_a(_bwd):
// the GGUF holds numpy's float32 -exp(A_log), we compute -exp in double and round once, and
// numpy's float32 exp is not correctly rounded, so the two may differ by 1 ulp.
void ExpectSameTensors(const ModelWeights& hf, const ModelWeights& gguf, size_t expected_count) {
  const auto a = Canonical(hf);
  const auto b = Canonical(gguf);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.size(), expected_count);
  for (const auto& [name, va] : a) {
    SCOPED_TRACE(name);
    auto it = b.find(name);
    ASSERT_NE(it, b.end());
    const TensorView& vb = it->second;
    ASSERT_EQ(va.shape, vb.shape);
    ASSERT_EQ(va.dtype, vb.dtype);
    ASSERT_EQ(va.nbytes, vb.nbytes);
    const bool is_a = name.ends_with(".ssm_a") || name.ends_with(".ssm_a_bwd");
    if (!is_a) {
      EXPECT_EQ(std::memcmp(va.data, vb.data, va.nbytes), 0);
      continue;
    }
    for (int64_t k = 0; k < va.numel(); ++k) EXPECT_LE(Ulps(va.f32()[k], vb.f32()[k]), 1) << "element " << k;
  }
}

TEST(LoaderGoldenTest, Qwen35MoeTinyHfEqualsGguf) {
  auto hf = LoadModel(kGolden + "qwen35moe-tiny/hf");
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  auto gguf = LoadModel(kGolden + "qwen35moe-tiny/model-f32.gguf");
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  ExpectSameConfig(hf->config, gguf->config);
  EXPECT_EQ(hf->config.family, ModelFamily::kQwen35Moe);
  EXPECT_FALSE(hf->config.has_preview_tensors);
  EXPECT_EQ(hf->config.diffusion.preview_gdn, PreviewGdn::kCausal);
  EXPECT_EQ(hf->config.rope_sections, (std::vector<int>{2, 1, 1}));
  // 3 output tensors + 3 GDN layers x (2 norms + 9 + router + 24 expert views + 4 shared)
  // + 1 attention layer x (2 norms + 6 + router + 24 + 4).
  ExpectSameTensors(*hf, *gguf, 3 + 3 * 40 + 37);
}

TEST(LoaderGoldenTest, CloverTinyHfEqualsGgufWithPreview) {
  auto hf = LoadModel(kGolden + "clover-tiny/hf");
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  auto gguf = LoadModel(kGolden + "clover-tiny/model-f32.gguf");
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  ExpectSameConfig(hf->config, gguf->config);
  const ModelConfig& c = hf->config;
  EXPECT_EQ(c.family, ModelFamily::kCloverMoe);
  EXPECT_EQ(c.mask_token_id, 511);
  EXPECT_EQ(c.diffusion.block_size, 8);
  EXPECT_EQ(c.diffusion.coreset_min_experts, 3);
  EXPECT_FLOAT_EQ(c.diffusion.coreset_mass, 0.9f);
  EXPECT_TRUE(c.has_preview_tensors);
  EXPECT_EQ(c.diffusion.preview_gdn, PreviewGdn::kBidirectional);
  EXPECT_EQ(c.effective_preview_topk(), 2);
  ExpectSameTensors(*hf, *gguf, 3 + 3 * 46 + 37);
}

TEST(LoaderGoldenTest, CanonicalConventions) {
  auto w = LoadModel(kGolden + "qwen35moe-tiny/model-f32.gguf");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const ModelConfig& c = w->config;
  ASSERT_EQ(w->layers.size(), 4u);
  const LayerWeights& l0 = w->layers[0];
  EXPECT_EQ(l0.kind, LayerKind::kGatedDeltaNet);
  EXPECT_EQ(w->layers[3].kind, LayerKind::kFullAttention);
  EXPECT_EQ(l0.gdn.conv.shape, (std::vector<int64_t>{c.conv_dim(), c.conv_kernel}));
  EXPECT_EQ(l0.gdn.conv.dtype, DType::kF32);
  for (int64_t j = 0; j < c.hv; ++j) EXPECT_LT(l0.gdn.a.f32()[j], 0.0f);
  ASSERT_EQ(l0.moe.expert_gate.size(), static_cast<size_t>(c.n_experts));
  EXPECT_EQ(l0.moe.expert_down[7].shape, (std::vector<int64_t>{c.hidden, c.expert_ffn}));
  EXPECT_EQ(l0.moe.shared_router.shape, (std::vector<int64_t>{1, c.hidden}));
  // Big untransformed matrices are zero-copy views into the mapped file; re-tiled ones are copies.
  auto opened = OpenModel(kGolden + "qwen35moe-tiny/hf");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto hf = BuildWeights(*opened);
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  const std::string p = "model.language_model.";
  EXPECT_EQ(hf->embed.data, opened->tensors.at(p + "embed_tokens.weight").view.data);
  EXPECT_EQ(hf->layers[0].moe.expert_gate[0].data, opened->tensors.at(p + "layers.0.mlp.experts.gate_up_proj").view.data);
  EXPECT_NE(hf->layers[0].gdn.qkv.data, opened->tensors.at(p + "layers.0.linear_attn.in_proj_qkv.weight").view.data);
}

TEST(LoaderGoldenTest, ConfigOnly) {
  auto c = LoadModelConfig(kGolden + "clover-tiny/hf/model.safetensors");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->n_layers, 4);
  EXPECT_EQ(c->diffusion.preview_gdn, PreviewGdn::kBidirectional);
  auto base = LoadModelConfig(kGolden + "clover-tiny/base-qwen35moe.gguf");
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  EXPECT_EQ(base->family, ModelFamily::kQwen35Moe);
  EXPECT_EQ(base->n_shared_experts, 1);
}

TEST(LoaderPathTest, Errors) {
  auto missing = LoadModel("/nonexistent/model.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto ambiguous = LoadModel(kGolden + "clover-tiny");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.status().message().find("2 .gguf files"), std::string::npos);
}

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("clover_cfg_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    std::ifstream in(kGolden + "qwen35moe-tiny/hf/config.json");
    base_ = nlohmann::json::parse(in);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const nlohmann::json& j) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << j.dump();
    return path;
  }
  std::filesystem::path dir_;
  nlohmann::json base_;
};

TEST_F(ConfigFileTest, MissingRequiredField) {
  base_["text_config"].erase("hidden_size");
  auto c = LoadHfConfig(Write("config.json", base_));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("'text_config.hidden_size'"), std::string::npos) << c.status().ToString();
  EXPECT_NE(c.status().message().find("config.json"), std::string::npos);
}

TEST_F(ConfigFileTest, WrongFieldType) {
  base_["text_config"]["num_experts"] = "eight";
  auto c = LoadHfConfig(Write("config.json", base_));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("expected integer, found string"), std::string::npos) << c.status().ToString();
}

TEST_F(ConfigFileTest, UnknownModelType) {
  base_["model_type"] = "llama";
  auto c = LoadHfConfig(Write("config.json", base_));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("\"llama\""), std::string::npos) << c.status().ToString();
}

TEST_F(ConfigFileTest, FlatTextConfigAndDerivedLayerKinds) {
  nlohmann::json flat = base_["text_config"];
  flat.erase("layer_types");
  flat["full_attention_interval"] = 2;
  auto c = LoadHfConfig(Write("config.json", flat));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->source_arch, "qwen3_5_moe_text");
  EXPECT_EQ(c->layer_kinds, (std::vector<LayerKind>{LayerKind::kGatedDeltaNet, LayerKind::kFullAttention,
                                                    LayerKind::kGatedDeltaNet, LayerKind::kFullAttention}));
  EXPECT_EQ(c->rope_dim, 8);
}

TEST_F(ConfigFileTest, GenerationConfigEos) {
  ModelConfig c;
  ASSERT_TRUE(ApplyGenerationConfig(Write("generation_config.json", {{"eos_token_id", {7, 3}}}), &c).ok());
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{7, 3}));
  ASSERT_TRUE(ApplyGenerationConfig(Write("generation_config.json", {{"eos_token_id", 9}, {"pad_token_id", 1}}), &c).ok());
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{9}));
  EXPECT_EQ(c.pad_token_id, 1);
  auto bad = ApplyGenerationConfig(Write("generation_config.json", {{"eos_token_id", "x"}}), &c);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
}

TEST_F(ConfigFileTest, CloverDiffusionFields) {
  std::ifstream in(kGolden + "clover-tiny/hf/config.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["diffusion"]["preview_gdn"] = "causal";
  j["diffusion"]["block_alignment"] = "absolute";
  j["diffusion"]["preview_topk"] = 4;
  auto c = LoadHfConfig(Write("config.json", j));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->diffusion.preview_gdn, PreviewGdn::kCausal);
  EXPECT_EQ(c->diffusion.block_alignment, BlockAlignment::kAbsolute);
  EXPECT_EQ(c->effective_preview_topk(), 4);
  j["diffusion"]["block_alignment"] = "sideways";
  auto bad = LoadHfConfig(Write("config.json", j));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("diffusion.block_alignment"), std::string::npos) << bad.status().ToString();
}

// Rewrites the golden clover GGUF metadata (tensors dropped) with `edit` applied.
Result<ModelConfig> GgufConfigWith(const std::function<void(std::vector<std::pair<std::string, io::GgufValue>>&)>& edit,
                                   const std::string& path) {
  auto src = io::GgufFile::Open(kGolden + "clover-tiny/model-f32.gguf");
  if (!src.ok()) return src.status();
  std::vector<std::pair<std::string, io::GgufValue>> kv = (*src)->metadata();
  edit(kv);
  io::GgufWriter w;
  for (auto& [k, v] : kv) w.AddKv(k, v);
  CLOVER_TRY(w.WriteFile(path));
  auto g = io::GgufFile::Open(path);
  if (!g.ok()) return g.status();
  return ConfigFromGguf(**g);
}

void SetKv(std::vector<std::pair<std::string, io::GgufValue>>& kv, const std::string& key, io::GgufValue v) {
  for (auto& [k, old] : kv) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  kv.emplace_back(key, std::move(v));
}

void EraseKv(std::vector<std::pair<std::string, io::GgufValue>>& kv, const std::string& key) {
  std::erase_if(kv, [&](const auto& p) { return p.first == key; });
}

TEST_F(ConfigFileTest, GgufMtpAndRecurrentLayers) {
  auto c = GgufConfigWith(
      [](auto& kv) {
        SetKv(kv, "clover_moe.block_count", io::GgufValue::U32(5));
        SetKv(kv, "clover_moe.nextn_predict_layers", io::GgufValue::U32(1));
        std::vector<io::GgufValue> rec;
        for (bool b : {true, false, true, false, false}) rec.push_back(io::GgufValue::Bool(b));
        SetKv(kv, "clover_moe.attention.recurrent_layers", io::GgufValue::Array(io::GgufType::kBool, rec));
      },
      (dir_ / "m.gguf").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->n_layers, 4);
  EXPECT_EQ(c->mtp_layers, 1);
  EXPECT_EQ(c->layer_kinds, (std::vector<LayerKind>{LayerKind::kGatedDeltaNet, LayerKind::kFullAttention,
                                                    LayerKind::kGatedDeltaNet, LayerKind::kFullAttention}));
  EXPECT_TRUE(c->tie_embeddings);  // no output.weight tensor in this metadata-only file
}

TEST_F(ConfigFileTest, GgufSharedExpertCountDefaultsToOne) {
  auto c = GgufConfigWith([](auto& kv) { EraseKv(kv, "clover_moe.expert_shared_count"); }, (dir_ / "m.gguf").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->n_shared_experts, 1);
}

TEST_F(ConfigFileTest, GgufMissingAndMistypedKeys) {
  auto missing = GgufConfigWith([](auto& kv) { EraseKv(kv, "clover_moe.expert_count"); }, (dir_ / "m.gguf").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("clover_moe.expert_count"), std::string::npos);
  auto mistyped = GgufConfigWith([](auto& kv) { SetKv(kv, "clover_moe.expert_count", io::GgufValue::String("8")); },
                                 (dir_ / "m.gguf").string());
  ASSERT_FALSE(mistyped.ok());
  EXPECT_NE(mistyped.status().message().find("expected an integer, found string"), std::string::npos)
      << mistyped.status().ToString();
}

TEST_F(ConfigFileTest, GgufAbsurdCountsAreRejected) {
  auto layers = GgufConfigWith([](auto& kv) { SetKv(kv, "clover_moe.block_count", io::GgufValue::U32(0x7fffffff)); },
                               (dir_ / "m.gguf").string());
  ASSERT_FALSE(layers.ok());
  EXPECT_NE(layers.status().message().find("number of layers"), std::string::npos) << layers.status().ToString();
  auto heads = GgufConfigWith([](auto& kv) { SetKv(kv, "clover_moe.attention.head_count", io::GgufValue::I64(-4)); },
                              (dir_ / "m.gguf").string());
  ASSERT_FALSE(heads.ok());
  EXPECT_NE(heads.status().message().find("out of range"), std::string::npos) << heads.status().ToString();
}

}  // namespace
}  // namespace clover::model
