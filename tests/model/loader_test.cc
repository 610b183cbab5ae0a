// LoadModel on the goldens: HF safetensors and GGUF give the same ModelConfig and canonical tensors.
#include "model/loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

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

}  // namespace
}  // namespace clover::model
