// The preview pass on random Clover models: I1 (read-only, deterministic) and the block maths
// against naive double-precision references that build the block mask explicitly.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "model/forward_test_util.h"
#include "model/random_weights.h"

namespace clover::model {
namespace {

using testing::Engine;
using testing::Logits;

ModelWeights RandomClover(const std::string& name, uint64_t seed) {
  Result<ModelConfig> c = RandomModelConfig(name);
  EXPECT_TRUE(c.ok());
  return MakeRandomWeights(*c, seed, DType::kF32);
}

std::vector<int32_t> Ids(int n, int seed, int vocab) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 131 + seed * 17 + 7) % (vocab - 1));
  return ids;
}

class PreviewI1Test : public ::testing::TestWithParam<std::string> {};

TEST_P(PreviewI1Test, PreviewIsReadOnlyAndDeterministic) {
  const ModelWeights w = RandomClover(GetParam(), 11);
  Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/8);
  for (int prompt : {16, 21}) {
    for (int block : {8, 16, 32}) {
      SequenceState seq = e.model->NewSequence();
      e.Append(seq, Ids(prompt, block, 512));
      const std::vector<float> before = testing::StateBytes(seq, w.config);
      std::vector<int32_t> rows(block, static_cast<int32_t>(*w.config.mask_token_id));
      rows[1] = 5;
      rows[block - 1] = 9;
      const Logits a = e.Preview(seq, rows);
      const Logits b = e.Preview(seq, rows);
      EXPECT_EQ(a, b) << "prompt " << prompt << " block " << block;
      EXPECT_EQ(testing::StateBytes(seq, w.config), before);
      EXPECT_EQ(seq.length(), prompt);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, PreviewI1Test,
                         ::testing::Values("clover-tiny", "clover-tiny-nopreview"),
                         [](const auto& info) {
                           return info.param == "clover-tiny" ? std::string("WithPreviewTensors")
                                                              : std::string("Without");
                         });

// Named activations of the last forward call.
using Dumps = std::map<std::string, std::vector<float>>;

void Record(Model& m, Dumps* dumps) {
  m.set_debug_hook([dumps](std::string_view name, int layer, const float* d, int64_t r, int64_t c) {
    (*dumps)[std::string(name) + "-" + std::to_string(layer)].assign(d, d + r * c);
  });
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

// The backward GDN branch of layer 0 in double precision, with the anti-causal conv written as a
// masked sum over the whole block (mask[i][t] = t in [i, i+K)) and the scan written per row as a
// sum over the rows AFTER it (row i excludes itself): o<-_i = S_{i+1}^T q^_i, where S_{i+1} is
// built from scratch from rows B-1 .. i+1.
TEST(PreviewReferenceTest, BackwardScanMatchesNaiveDouble) {
  const ModelWeights w = RandomClover("clover-tiny", 5);
  const ModelConfig& c = w.config;
  Engine e(w);
  Dumps d;
  SequenceState seq = e.model->NewSequence();
  e.Append(seq, Ids(13, 1, 512));
  Record(*e.model, &d);
  const int B = 8;
  std::vector<int32_t> rows(B, static_cast<int32_t>(*c.mask_token_id));
  rows[2] = 40;
  e.Preview(seq, rows);
  const std::vector<float>& xn = d.at("attn_norm-0");
  const std::vector<float>& bwd = d.at("gdn_bwd_core-0");
  const std::vector<float>& fwd_conv = d.at("gdn_qkv_normed-0");
  const GdnWeights& g = w.layers[0].gdn;
  const int64_t H = c.hidden, C = c.conv_dim(), kd = c.key_dim(), vd = c.value_dim();
  auto matvec = [&](const TensorView& m, int row, int i) {
    double s = 0;
    for (int64_t h = 0; h < H; ++h) s += double{m.f32()[row * H + h]} * xn[i * H + h];
    return s;
  };
  // Pre-conv rows and the anti-causal conv through an explicit mask.
  std::vector<double> m(B * C), conv(B * C);
  for (int i = 0; i < B; ++i)
    for (int64_t ch = 0; ch < C; ++ch) m[i * C + ch] = matvec(g.qkv, ch, i);
  for (int i = 0; i < B; ++i) {
    for (int64_t ch = 0; ch < C; ++ch) {
      double s = 0;
      for (int t = 0; t < B; ++t) {
        const bool visible = t >= i && t < i + c.conv_kernel;
        if (visible) s += double{g.conv_bwd.f32()[ch * c.conv_kernel + (t - i)]} * m[t * C + ch];
      }
      conv[i * C + ch] = s * Sigmoid(s);
    }
  }
  double max_err = 0;
  for (int h = 0; h < c.hv; ++h) {
    const int64_t kq = static_cast<int64_t>(h % c.hk) * c.dk;
    for (int i = 0; i < B; ++i) {
      std::vector<double> S(c.dk * c.dv, 0.0);
      for (int t = B - 1; t > i; --t) {  // rows after i only
        std::vector<double> k(c.dk);
        double nrm = 0;
        for (int a = 0; a < c.dk; ++a) nrm += conv[t * C + kd + kq + a] * conv[t * C + kd + kq + a];
        for (int a = 0; a < c.dk; ++a) k[a] = conv[t * C + kd + kq + a] / std::sqrt(nrm + 1e-6);
        const double beta = Sigmoid(matvec(g.beta_bwd, h, t));
        const double decay =
            std::exp(double{g.a_bwd.f32()[h]} * Softplus(matvec(g.alpha_bwd, h, t) + g.dt_bwd.f32()[h]));
        for (double& s : S) s *= decay;
        for (int b = 0; b < c.dv; ++b) {
          double sk = 0;
          for (int a = 0; a < c.dk; ++a) sk += S[a * c.dv + b] * k[a];
          const double u = beta * (conv[t * C + 2 * kd + h * c.dv + b] - sk);
          for (int a = 0; a < c.dk; ++a) S[a * c.dv + b] += k[a] * u;
        }
      }
      for (int b = 0; b < c.dv; ++b) {
        double o = 0;
        for (int a = 0; a < c.dk; ++a) o += S[a * c.dv + b] * fwd_conv[i * C + kq + a];
        max_err = std::max(max_err, std::abs(o - bwd[i * vd + h * c.dv + b]));
      }
      if (i == B - 1) {
        for (int b = 0; b < c.dv; ++b) EXPECT_EQ(bwd[i * vd + h * c.dv + b], 0.0f);
      }
    }
  }
  EXPECT_LT(max_err, 1e-4);
}

}  // namespace
}  // namespace clover::model
