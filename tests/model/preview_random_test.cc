// The preview pass on random Clover models: I1 (read-only, deterministic) and the block maths
// against naive double-precision references that build the block mask explicitly.
#include <gtest/gtest.h>

#include <algorithm>
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

// One call with an append group (sequence A) and a preview group (sequence B) returns the same
// logits as two separate calls, appends first; a state in both kinds is rejected.
TEST(PreviewBatchTest, MixedBatchEqualsSeparateCalls) {
  const ModelWeights w = RandomClover("clover-tiny", 21);
  Engine e(w);
  SequenceState a = e.model->NewSequence();
  SequenceState b = e.model->NewSequence();
  SequenceState a2 = e.model->NewSequence();
  e.Append(a, Ids(9, 1, 512));
  e.Append(a2, Ids(9, 1, 512));
  e.Append(b, Ids(12, 2, 512));
  const std::vector<int32_t> step = {42, 43};
  std::vector<int32_t> block(8, static_cast<int32_t>(*w.config.mask_token_id));
  block[3] = 17;
  const Logits want_append = e.Append(a2, step);
  const Logits want_preview = e.Preview(b, block);

  ForwardBatch batch;
  batch.appends.push_back({&a, step, a.length(), {0, 1}});
  batch.previews.push_back({&b, block, b.length(), {0, 1, 2, 3, 4, 5, 6, 7}});
  Result<ForwardLogits> out = e.model->Forward(batch, e.scratch);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->n_rows, 10);
  for (int r = 0; r < 10; ++r) {
    const std::vector<float> row(out->row(r), out->row(r) + out->vocab);
    EXPECT_EQ(row, r < 2 ? want_append[r] : want_preview[r - 2]) << "row " << r;
  }
  EXPECT_EQ(a.length(), 11);
  EXPECT_EQ(b.length(), 12);

  ForwardBatch both;
  both.appends.push_back({&a, step, a.length(), {}});
  both.previews.push_back({&a, block, a.length(), {}});
  Result<ForwardLogits> bad = e.model->Forward(both, e.scratch);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(a.length(), 11);
}

// Fused commit + preview: one call that appends a block to a sequence and previews the next block
// of the same sequence equals the append followed by the preview (state and logits), for both
// preview GDN modes and a block that crosses a KV page.
TEST(PreviewBatchTest, FusedCommitAndPreviewEqualsSeparateCalls) {
  for (const char* name : {"clover-tiny", "clover-tiny-nopreview"}) {
    const ModelWeights w = RandomClover(name, 27);
    Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/8);
    const int32_t mask = static_cast<int32_t>(*w.config.mask_token_id);
    SequenceState fused = e.model->NewSequence();
    SequenceState split = e.model->NewSequence();
    e.Append(fused, Ids(13, 3, 512));
    e.Append(split, Ids(13, 3, 512));
    const std::vector<int32_t> commit = Ids(8, 9, 512);
    std::vector<int32_t> next(8, mask);
    next[2] = 33;
    const Logits want_commit = e.Append(split, commit);
    const Logits want_preview = e.Preview(split, next);

    ForwardBatch batch;
    batch.appends.push_back({&fused, commit, fused.length(), {0, 1, 2, 3, 4, 5, 6, 7}});
    batch.previews.push_back({&fused, next, fused.length() + 8, {0, 1, 2, 3, 4, 5, 6, 7}});
    Result<ForwardLogits> out = e.model->Forward(batch, e.scratch);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->n_rows, 16);
    for (int r = 0; r < 16; ++r) {
      const std::vector<float> row(out->row(r), out->row(r) + out->vocab);
      const std::vector<float>& want = r < 8 ? want_commit[r] : want_preview[r - 8];
      for (size_t i = 0; i < row.size(); ++i)
        ASSERT_NEAR(row[i], want[i], 1e-5f) << name << " row " << r << " logit " << i;
    }
    EXPECT_EQ(fused.length(), 21);
    EXPECT_EQ(testing::StateBytes(fused, w.config), testing::StateBytes(split, w.config)) << name;
  }
}

// A one-row block is the causal step: attention sees [0, p] either way, the backward scan of the
// last row reads the zero state, and the coreset of one row holds that row's own top-k. Also
// covers a preview of an empty sequence (p = 0).
TEST(PreviewBatchTest, OneRowPreviewEqualsCausalStep) {
  const ModelWeights w = RandomClover("clover-tiny", 23);
  Engine e(w);
  for (int p : {0, 5}) {
    SequenceState seq = e.model->NewSequence();
    SequenceState causal = e.model->NewSequence();
    if (p > 0) {
      e.Append(seq, Ids(p, 4, 512));
      e.Append(causal, Ids(p, 4, 512));
    }
    const Logits preview = e.Preview(seq, {99});
    const Logits step = e.Append(causal, {99});
    EXPECT_LE(testing::MaxAbsDiff(preview, step), 1e-5) << "p " << p;
    EXPECT_EQ(seq.length(), p);
  }
}

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
        const double decay = std::exp(double{g.a_bwd.f32()[h]} *
                                      Softplus(matvec(g.alpha_bwd, h, t) + g.dt_bwd.f32()[h]));
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

std::vector<double> MatVec(const TensorView& m, const float* x, int64_t in) {
  const int64_t out = m.numel() / in;
  std::vector<double> y(out, 0.0);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) y[o] += double{m.f32()[o * in + i]} * x[i];
  return y;
}

void RmsNormD(double* x, int64_t n, const float* w, double eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double r = 1.0 / std::sqrt(ss / n + eps);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * r * w[i];
}

void RopeD(double* x, int rope_dim, int64_t pos, double theta) {
  const int half = rope_dim / 2;
  for (int i = 0; i < half; ++i) {
    const double angle = pos * std::pow(theta, -2.0 * i / rope_dim);
    const double a = x[i], b = x[i + half];
    x[i] = a * std::cos(angle) - b * std::sin(angle);
    x[i + half] = b * std::cos(angle) + a * std::sin(angle);
  }
}

// The preview attention layer in double: K/V of the prefix and of the block rows from their
// normed inputs, scores through an explicit [B x (p+B)] visibility matrix (prefix and the whole
// block visible: no mask inside the block), output gate and o_proj.
TEST(PreviewReferenceTest, AttentionMatchesNaiveDoubleWithExplicitBlockMask) {
  const ModelWeights w = RandomClover("clover-tiny", 9);
  const ModelConfig& c = w.config;
  const int layer = 3;
  ASSERT_EQ(c.layer_kinds[layer], LayerKind::kFullAttention);
  const AttentionWeights& a = w.layers[layer].attn;
  for (int p : {13, 16}) {
    Engine e(w, 2, SelectIsa().value(), /*kv_page_size=*/8);
    Dumps d;
    Record(*e.model, &d);
    SequenceState seq = e.model->NewSequence();
    e.Append(seq, Ids(p, 2, 512));
    const std::vector<float> prefix_x = d.at("attn_norm-3");
    const int B = 8;
    std::vector<int32_t> rows(B, static_cast<int32_t>(*c.mask_token_id));
    rows[4] = 77;
    e.Preview(seq, rows);
    const std::vector<float>& block_x = d.at("attn_norm-3");
    const std::vector<float>& got = d.at("attn_output-3");
    const int64_t H = c.hidden, dh = c.head_dim, T = p + B;
    // K, V of every position; q and gate of the block rows.
    std::vector<std::vector<double>> K(T), V(T), Q(B), G(B);
    for (int64_t t = 0; t < T; ++t) {
      const float* x = t < p ? prefix_x.data() + t * H : block_x.data() + (t - p) * H;
      K[t] = MatVec(a.k, x, H);
      V[t] = MatVec(a.v, x, H);
      for (int j = 0; j < c.n_head_kv; ++j) {
        RmsNormD(K[t].data() + j * dh, dh, a.k_norm.f32(), c.rms_eps);
        RopeD(K[t].data() + j * dh, c.rope_dim, t, c.rope_theta);
      }
      if (t < p) continue;
      const std::vector<double> qg = MatVec(a.q, x, H);
      Q[t - p].resize(c.n_head * dh);
      G[t - p].resize(c.n_head * dh);
      for (int h = 0; h < c.n_head; ++h) {
        std::copy(qg.begin() + h * 2 * dh, qg.begin() + h * 2 * dh + dh, Q[t - p].begin() + h * dh);
        std::copy(qg.begin() + h * 2 * dh + dh, qg.begin() + (h + 1) * 2 * dh,
                  G[t - p].begin() + h * dh);
        RmsNormD(Q[t - p].data() + h * dh, dh, a.q_norm.f32(), c.rms_eps);
        RopeD(Q[t - p].data() + h * dh, c.rope_dim, t, c.rope_theta);
      }
    }
    std::vector<std::vector<bool>> visible(B, std::vector<bool>(T));
    for (int i = 0; i < B; ++i)
      for (int64_t t = 0; t < T; ++t) visible[i][t] = t < p || (t >= p && t < p + B);
    double max_err = 0;
    const int group = c.n_head / c.n_head_kv;
    for (int i = 0; i < B; ++i) {
      std::vector<float> att(c.n_head * dh);
      for (int h = 0; h < c.n_head; ++h) {
        const int64_t kv = static_cast<int64_t>(h / group) * dh;
        std::vector<double> sc(T, -1e300);
        double mx = -1e300;
        for (int64_t t = 0; t < T; ++t) {
          if (!visible[i][t]) continue;
          double s = 0;
          for (int64_t x = 0; x < dh; ++x) s += Q[i][h * dh + x] * K[t][kv + x];
          sc[t] = s / std::sqrt(static_cast<double>(dh));
          mx = std::max(mx, sc[t]);
        }
        double z = 0;
        std::vector<double> o(dh, 0.0);
        for (int64_t t = 0; t < T; ++t) {
          if (!visible[i][t]) continue;
          const double e = std::exp(sc[t] - mx);
          z += e;
          for (int64_t x = 0; x < dh; ++x) o[x] += e * V[t][kv + x];
        }
        for (int64_t x = 0; x < dh; ++x)
          att[h * dh + x] = static_cast<float>(o[x] / z * Sigmoid(G[i][h * dh + x]));
      }
      const std::vector<double> out = MatVec(a.o, att.data(), c.n_head * dh);
      for (int64_t x = 0; x < H; ++x)
        max_err = std::max(max_err, std::abs(out[x] - got[i * H + x]));
    }
    EXPECT_LT(max_err, 1e-4) << "prefix " << p;
  }
}

// The forward GDN branch of a preview in double: causal conv from the committed conv state, the
// delta rule from the committed recurrent state, compared before the backward mix.
TEST(PreviewReferenceTest, ForwardScanMatchesNaiveDouble) {
  const ModelWeights w = RandomClover("clover-tiny", 12);
  const ModelConfig& c = w.config;
  Engine e(w);
  Dumps d;
  SequenceState seq = e.model->NewSequence();
  e.Append(seq, Ids(11, 3, 512));
  Record(*e.model, &d);
  const int B = 16;
  std::vector<int32_t> rows(B, static_cast<int32_t>(*c.mask_token_id));
  rows[0] = 3;
  e.Preview(seq, rows);
  const GdnWeights& g = w.layers[0].gdn;
  const std::vector<float>& xn = d.at("attn_norm-0");
  const std::vector<float>& got = d.at("gdn_core_out-0");
  const int64_t H = c.hidden, C = c.conv_dim(), kd = c.key_dim(), vd = c.value_dim();
  const int K = c.conv_kernel;
  std::vector<std::vector<double>> m(K - 1 + B);
  const float* cs = seq.conv_state(0);
  for (int j = 0; j < K - 1; ++j) m[j].assign(cs + j * C, cs + (j + 1) * C);
  for (int i = 0; i < B; ++i) m[K - 1 + i] = MatVec(g.qkv, xn.data() + i * H, H);
  std::vector<double> S(seq.recurrent_state(0),
                        seq.recurrent_state(0) + int64_t{c.hv} * c.dk * c.dv);
  double max_err = 0;
  for (int i = 0; i < B; ++i) {
    std::vector<double> conv(C);
    for (int64_t ch = 0; ch < C; ++ch) {
      double s = 0;
      for (int j = 0; j < K; ++j) s += double{g.conv.f32()[ch * K + j]} * m[i + j][ch];
      conv[ch] = s * Sigmoid(s);
    }
    for (int h = 0; h < c.hk; ++h) {
      for (int64_t off : {int64_t{0}, kd}) {
        double nrm = 0;
        for (int x = 0; x < c.dk; ++x) nrm += conv[off + h * c.dk + x] * conv[off + h * c.dk + x];
        const double scale =
            (off == 0 ? 1.0 / std::sqrt(double{1.0} * c.dk) : 1.0) / std::sqrt(nrm + 1e-6);
        for (int x = 0; x < c.dk; ++x) conv[off + h * c.dk + x] *= scale;
      }
    }
    const std::vector<double> bt = MatVec(g.beta, xn.data() + i * H, H);
    const std::vector<double> al = MatVec(g.alpha, xn.data() + i * H, H);
    for (int h = 0; h < c.hv; ++h) {
      const int64_t kq = static_cast<int64_t>(h % c.hk) * c.dk;
      double* s = S.data() + int64_t{h} * c.dk * c.dv;
      const double decay = std::exp(double{g.a.f32()[h]} * Softplus(al[h] + g.dt_bias.f32()[h]));
      const double beta = Sigmoid(bt[h]);
      for (int64_t x = 0; x < int64_t{c.dk} * c.dv; ++x) s[x] *= decay;
      for (int b = 0; b < c.dv; ++b) {
        double sk = 0;
        for (int x = 0; x < c.dk; ++x) sk += s[x * c.dv + b] * conv[kd + kq + x];
        const double u = beta * (conv[2 * kd + h * c.dv + b] - sk);
        for (int x = 0; x < c.dk; ++x) s[x * c.dv + b] += conv[kd + kq + x] * u;
      }
      for (int b = 0; b < c.dv; ++b) {
        double o = 0;
        for (int x = 0; x < c.dk; ++x) o += s[x * c.dv + b] * conv[kq + x];
        max_err = std::max(max_err, std::abs(o - got[i * vd + h * c.dv + b]));
      }
    }
  }
  EXPECT_LT(max_err, 1e-4);
}

}  // namespace
}  // namespace clover::model
