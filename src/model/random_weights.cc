// MakeRandomWeights: one PRNG stream, tensors filled in a fixed order.
// Normal draws are approximated by a sum of four uniforms (Irwin-Hall, rescaled to unit
// variance): exact Gaussian tails do not matter for a random model, speed does (GB-sized ones).
#include "model/random_weights.h"

#include <cmath>
#include <cstring>

#include "core/check.h"

namespace clover::model {
namespace {

class Filler {
 public:
  Filler(uint64_t seed, WeightStorage& storage) : state_(seed), storage_(storage) {}

  TensorView Normal(std::vector<int64_t> shape, DType dtype, double mean, double std) {
    // Sum of 4 U(0,1) has mean 2 and variance 1/3.
    const double scale = std * std::sqrt(3.0);
    return Make(std::move(shape), dtype,
                [&] { return mean + scale * (Unit() + Unit() + Unit() + Unit() - 2.0); });
  }
  TensorView Uniform(std::vector<int64_t> shape, double lo, double hi) {
    return Make(std::move(shape), DType::kF32, [&] { return lo + (hi - lo) * Unit(); });
  }

 private:
  template <typename Draw>
  TensorView Make(std::vector<int64_t> shape, DType dtype, Draw draw) {
    TensorView t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    const int64_t n = t.numel();
    t.nbytes = n * (dtype == DType::kF32 ? 4 : 2);
    void* p = storage_.Allocate(t.nbytes);
    for (int64_t i = 0; i < n; ++i) {
      const float v = static_cast<float>(draw());
      if (dtype == DType::kF32) {
        static_cast<float*>(p)[i] = v;
      } else if (dtype == DType::kBF16) {
        static_cast<uint16_t*>(p)[i] = F32ToBF16(v);
      } else {
        CLOVER_CHECK(dtype == DType::kF16);
        static_cast<uint16_t*>(p)[i] = F32ToF16(v);
      }
    }
    t.data = p;
    return t;
  }

  // SplitMix64 step mapped to [0, 1).
  double Unit() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

  uint64_t state_;
  WeightStorage& storage_;
};

}  // namespace

ModelWeights MakeRandomWeights(const ModelConfig& c, uint64_t seed, DType dtype) {
  ModelWeights w;
  w.config = c;
  Filler f(seed, *w.storage);
  const int64_t h = c.hidden;
  const double lin_h = 1.0 / std::sqrt(static_cast<double>(h));
  w.embed = f.Normal({c.vocab_size, h}, dtype, 0.0, 1.0);
  w.output_norm = f.Normal({h}, DType::kF32, 1.0, 0.1);
  w.output = f.Normal({c.vocab_size, h}, dtype, 0.0, 2.0 * lin_h);
  w.layers.resize(c.n_layers);
  for (int i = 0; i < c.n_layers; ++i) {
    LayerWeights& l = w.layers[i];
    l.kind = c.layer_kinds[i];
    l.attn_norm = f.Normal({h}, DType::kF32, 1.0, 0.1);
    l.post_norm = f.Normal({h}, DType::kF32, 1.0, 0.1);
    if (l.kind == LayerKind::kGatedDeltaNet) {
      GdnWeights& g = l.gdn;
      g.qkv = f.Normal({c.conv_dim(), h}, dtype, 0.0, lin_h);
      g.z = f.Normal({c.value_dim(), h}, dtype, 0.0, lin_h);
      g.beta = f.Normal({c.hv, h}, dtype, 0.0, lin_h);
      g.alpha = f.Normal({c.hv, h}, dtype, 0.0, 0.5 * lin_h);
      g.conv = f.Normal({c.conv_dim(), c.conv_kernel}, DType::kF32, 0.0, 0.5);
      g.dt_bias = f.Uniform({c.hv}, -1.0, 1.0);
      g.a = f.Uniform({c.hv}, -1.0, -0.05);  // -exp(A_log), A_log = log U(0.05, 1)
      g.norm = f.Normal({c.dv}, DType::kF32, 1.0, 0.1);
      g.out = f.Normal({h, c.value_dim()}, dtype, 0.0,
                       1.0 / std::sqrt(static_cast<double>(c.value_dim())));
      if (c.has_preview_tensors) {
        g.conv_bwd = f.Normal({c.conv_dim(), c.conv_kernel}, DType::kF32, 0.0, 0.5);
        g.beta_bwd = f.Normal({c.hv, h}, dtype, 0.0, lin_h);
        g.alpha_bwd = f.Normal({c.hv, h}, dtype, 0.0, 0.5 * lin_h);
        g.a_bwd = f.Uniform({c.hv}, -1.0, -0.05);
        g.dt_bwd = f.Uniform({c.hv}, -1.0, 1.0);
        g.mix_bwd = f.Normal({c.hv}, DType::kF32, 0.0, 1.0);
      }
    } else {
      AttentionWeights& a = l.attn;
      const int64_t att_dim = int64_t{c.n_head} * c.head_dim;
      a.q = f.Normal({c.q_proj_dim(), h}, dtype, 0.0, lin_h);
      a.k = f.Normal({c.kv_dim(), h}, dtype, 0.0, lin_h);
      a.v = f.Normal({c.kv_dim(), h}, dtype, 0.0, lin_h);
      a.o = f.Normal({h, att_dim}, dtype, 0.0, 1.0 / std::sqrt(static_cast<double>(att_dim)));
      a.q_norm = f.Normal({c.head_dim}, DType::kF32, 1.0, 0.1);
      a.k_norm = f.Normal({c.head_dim}, DType::kF32, 1.0, 0.1);
    }
    MoeWeights& m = l.moe;
    m.router = f.Normal({c.n_experts, h}, DType::kF32, 0.0, 3.0 * lin_h);
    const double lin_f = 1.0 / std::sqrt(static_cast<double>(c.expert_ffn));
    for (int e = 0; e < c.n_experts; ++e) {
      m.expert_gate.push_back(f.Normal({c.expert_ffn, h}, dtype, 0.0, lin_h));
      m.expert_up.push_back(f.Normal({c.expert_ffn, h}, dtype, 0.0, lin_h));
      m.expert_down.push_back(f.Normal({h, c.expert_ffn}, dtype, 0.0, lin_f));
    }
    if (c.shared_ffn > 0) {
      const double lin_s = 1.0 / std::sqrt(static_cast<double>(c.shared_ffn));
      m.shared_gate = f.Normal({c.shared_ffn, h}, dtype, 0.0, lin_h);
      m.shared_up = f.Normal({c.shared_ffn, h}, dtype, 0.0, lin_h);
      m.shared_down = f.Normal({h, c.shared_ffn}, dtype, 0.0, lin_s);
      m.shared_router = f.Normal({1, h}, DType::kF32, 0.0, lin_h);
    }
  }
  return w;
}

Result<ModelConfig> RandomModelConfig(const std::string& name) {
  ModelConfig c;
  c.source_arch = "random-" + name;
  c.rms_eps = 1e-6f;
  c.rope_theta = 1e7;
  c.conv_kernel = 4;
  c.full_attention_interval = 4;
  // "clover-tiny[-nopreview]": the tiny shapes as a Clover model (mask id = last vocab row),
  // with or without the preview tensors.
  const bool clover = name == "clover-tiny" || name == "clover-tiny-nopreview";
  if (name == "tiny" || clover) {
    c.vocab_size = 512;
    c.hidden = 64;
    c.n_layers = 4;
    c.n_head = 4;
    c.n_head_kv = 2;
    c.head_dim = 32;
    c.rope_dim = 8;
    c.hk = 2;
    c.hv = 4;
    c.dk = c.dv = 16;
    c.n_experts = 8;
    c.top_k = 2;
    c.expert_ffn = 32;
    c.shared_ffn = 32;
  } else if (name == "medium") {
    c.vocab_size = 32768;
    c.hidden = 1024;
    c.n_layers = 8;
    c.n_head = 8;
    c.n_head_kv = 2;
    c.head_dim = 128;
    c.rope_dim = 32;
    c.hk = 8;
    c.hv = 16;
    c.dk = c.dv = 128;
    c.n_experts = 32;
    c.top_k = 8;
    c.expert_ffn = 256;
    c.shared_ffn = 256;
  } else {
    return InvalidArgument(
        "random model '" + name +
        "': unknown, expected tiny, clover-tiny, clover-tiny-nopreview or medium");
  }
  if (clover) {
    c.family = ModelFamily::kCloverMoe;
    c.mask_token_id = c.vocab_size - 1;
    c.has_preview_tensors = name == "clover-tiny";
    c.diffusion.block_size = 8;
    c.diffusion.coreset_min_experts = 3;  // below n_experts, so the coreset restricts
    c.diffusion.preview_gdn =
        c.has_preview_tensors ? PreviewGdn::kBidirectional : PreviewGdn::kCausal;
  }
  c.n_shared_experts = c.shared_ffn > 0 ? 1 : 0;
  c.max_context = 4096;
  for (int i = 0; i < c.n_layers; ++i) {
    c.layer_kinds.push_back((i + 1) % c.full_attention_interval == 0 ? LayerKind::kFullAttention
                                                                     : LayerKind::kGatedDeltaNet);
  }
  return c;
}

}  // namespace clover::model
