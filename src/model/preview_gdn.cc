// Backward GDN scan of the preview pass: anti-causal conv, backward gates, reverse delta rule.
#include "model/preview_gdn.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/l2_norm.h"

namespace clover::model {

void GdnPreviewBackward(const ForwardContext& fc, int layer, const GdnWeights& w, const float* x,
                        const float* mixed, const float* q_hat, float* core,
                        ForwardScratch& scratch) {
  const ModelConfig& cfg = fc.config;
  const kernels::KernelContext& kc = fc.kc;
  const int64_t n = fc.n_rows;
  const int64_t conv_dim = cfg.conv_dim();
  const int64_t key_dim = cfg.key_dim();
  const int64_t value_dim = cfg.value_dim();
  const int hv = cfg.hv;
  const int hk = cfg.hk;
  const int64_t dk = cfg.dk;
  const int64_t dv = cfg.dv;
  const int K = cfg.conv_kernel;

  float* conv = scratch.Get(ForwardScratch::kPreviewBwdConv, n * conv_dim);
  float* gates = scratch.Get(ForwardScratch::kPreviewBwdGates, 2 * n * hv);
  float* beta = gates;
  float* decay = gates + n * hv;
  kernels::MatMul(kc, x, n, cfg.hidden, w.beta_bwd, beta, hv);
  kernels::MatMul(kc, x, n, cfg.hidden, w.alpha_bwd, decay, hv);
  const float* a = w.a_bwd.f32();
  const float* dt = w.dt_bwd.f32();
  for (int64_t r = 0; r < n; ++r) {
    for (int h = 0; h < hv; ++h) {
      beta[r * hv + h] = kernels::ref::Sigmoid(beta[r * hv + h]);
      decay[r * hv + h] = a[h] * kernels::ref::Softplus(decay[r * hv + h] + dt[h]);
    }
  }

  // Append groups of the same pass keep their causal output: only preview rows get the branch.
  std::vector<const GroupRows*> previews;
  for (const GroupRows& g : fc.groups)
    if (g.preview()) previews.push_back(&g);
  const float* wc = w.conv_bwd.f32();
  for (const GroupRows* gp : previews) {
    const GroupRows& g = *gp;
    fc.ForRows(g.count, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        float* o = conv + (g.begin + t) * conv_dim;
        // Only k~ and v~ are read; q~ channels [0, key_dim) are skipped.
        for (int64_t c = key_dim; c < conv_dim; ++c) {
          float acc = 0.0f;
          for (int j = 0; j < K && t + j < g.count; ++j)
            acc += wc[c * K + j] * mixed[(g.begin + t + j) * conv_dim + c];
          o[c] = kernels::ref::Silu(acc);
        }
        for (int h = 0; h < hk; ++h)
          kernels::ref::L2Norm(o + key_dim + h * dk, dk, cfg.rms_eps, 1.0f);
      }
    });
  }

  fc.Dump("gdn_bwd_conv", layer, conv, n, conv_dim);
  float* bwd = scratch.Get(ForwardScratch::kPreviewBwdCore, n * value_dim);
  const float* mix = w.mix_bwd.f32();
  kc.pool.ParallelFor(
      static_cast<int64_t>(previews.size()) * hv,
      [&](int64_t i0, int64_t i1) {
        std::vector<float> state(dk * dv);
        std::vector<float> u(dv);
        for (int64_t item = i0; item < i1; ++item) {
          const GroupRows& g = *previews[item / hv];
          const int h = static_cast<int>(item % hv);
          const int64_t kq = static_cast<int64_t>(h % hk) * dk;  // tiled v-heads
          std::fill(state.begin(), state.end(), 0.0f);
          for (int64_t t = g.count - 1; t >= 0; --t) {
            const int64_t r = g.begin + t;
            // Read before the update: row t sees rows t+1 .. end only.
            const float* q = q_hat + r * conv_dim + kq;
            float* o = bwd + r * value_dim + h * dv;
            std::fill(o, o + dv, 0.0f);
            for (int64_t i = 0; i < dk; ++i) kc.table.axpy(q[i], state.data() + i * dv, o, dv);
            const float* k = conv + r * conv_dim + key_dim + kq;
            const float* v = conv + r * conv_dim + 2 * key_dim + h * dv;
            kc.table.scale(std::exp(decay[r * hv + h]), state.data(), dk * dv);
            std::copy(v, v + dv, u.begin());
            for (int64_t i = 0; i < dk; ++i)
              kc.table.axpy(-k[i], state.data() + i * dv, u.data(), dv);
            const float b = beta[r * hv + h];
            for (int64_t j = 0; j < dv; ++j) u[j] *= b;
            for (int64_t i = 0; i < dk; ++i)
              kc.table.axpy(k[i], u.data(), state.data() + i * dv, dv);
          }
        }
      },
      1);
  fc.Dump("gdn_bwd_core", layer, bwd, n, value_dim);
  for (const GroupRows* g : previews) {
    for (int64_t r = g->begin; r < g->begin + g->count; ++r) {
      for (int h = 0; h < hv; ++h) {
        const float lambda = kernels::ref::Sigmoid(mix[h]);
        kc.table.axpy(lambda, bwd + r * value_dim + h * dv, core + r * value_dim + h * dv, dv);
      }
    }
  }
}

}  // namespace clover::model
