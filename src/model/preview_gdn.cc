// Preview GDN: backward branch (anti-causal conv, backward gates, reverse delta rule) and the
// cached-rows path of live-row reuse.
#include "model/preview_gdn.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/l2_norm.h"
#include "model/gdn_layer.h"

namespace clover::model {
namespace {

// Does beta~ = sigmoid(beta~) and decay = a_bwd * softplus(decay + dt_bwd) in place for `rows`
// rows of hv floats each (strides in floats).
void BackwardGates(const ModelConfig& cfg, const GdnWeights& w, int64_t rows, float* beta,
                   float* decay, int64_t stride) {
  const float* a = w.a_bwd.f32();
  const float* dt = w.dt_bwd.f32();
  for (int64_t r = 0; r < rows; ++r) {
    for (int h = 0; h < cfg.hv; ++h) {
      beta[r * stride + h] = kernels::ref::Sigmoid(beta[r * stride + h]);
      decay[r * stride + h] = a[h] * kernels::ref::Softplus(decay[r * stride + h] + dt[h]);
    }
  }
}

// Inputs of the backward branch over one block of `rows` rows; strides in floats.
struct BackwardBlock {
  int64_t rows = 0;
  const float* mixed = nullptr;  // pre-conv rows
  int64_t mixed_stride = 0;
  const float* beta = nullptr;  // backward gates, activated
  const float* decay = nullptr;
  int64_t gate_stride = 0;
  const float* q_hat = nullptr;  // the forward branch's normed rows, [rows][conv_dim]
  float* core = nullptr;         // [rows][value_dim]: gets sigmoid(mix) * o<-
  float* conv = nullptr;         // scratch [rows][conv_dim]
  float* bwd = nullptr;          // scratch [rows][value_dim]
};

void RunBackwardBlock(const ForwardContext& fc, const GdnWeights& w, const BackwardBlock& b) {
  const ModelConfig& cfg = fc.config;
  const kernels::KernelContext& kc = fc.kc;
  const int64_t conv_dim = cfg.conv_dim();
  const int64_t key_dim = cfg.key_dim();
  const int64_t value_dim = cfg.value_dim();
  const int hv = cfg.hv;
  const int hk = cfg.hk;
  const int64_t dk = cfg.dk;
  const int64_t dv = cfg.dv;
  const int K = cfg.conv_kernel;
  const float* wc = w.conv_bwd.f32();
  fc.ForRows(b.rows, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* o = b.conv + t * conv_dim;
      // Only k~ and v~ are read; q~ channels [0, key_dim) are skipped.
      for (int64_t c = key_dim; c < conv_dim; ++c) {
        float acc = 0.0f;
        for (int j = 0; j < K && t + j < b.rows; ++j)
          acc += wc[c * K + j] * b.mixed[(t + j) * b.mixed_stride + c];
        o[c] = kernels::ref::Silu(acc);
      }
      for (int h = 0; h < hk; ++h)
        kernels::ref::L2Norm(o + key_dim + h * dk, dk, cfg.rms_eps, 1.0f);
    }
  });
  kc.pool.ParallelFor(
      hv,
      [&](int64_t h0, int64_t h1) {
        std::vector<float> state(dk * dv);
        std::vector<float> u(dv);
        for (int64_t h = h0; h < h1; ++h) {
          const int64_t kq = (h % hk) * dk;  // tiled v-heads
          std::fill(state.begin(), state.end(), 0.0f);
          for (int64_t t = b.rows - 1; t >= 0; --t) {
            // Read before the update: row t sees rows t+1 .. end only.
            const float* q = b.q_hat + t * conv_dim + kq;
            float* o = b.bwd + t * value_dim + h * dv;
            std::fill(o, o + dv, 0.0f);
            for (int64_t i = 0; i < dk; ++i) kc.table.axpy(q[i], state.data() + i * dv, o, dv);
            const float* k = b.conv + t * conv_dim + key_dim + kq;
            const float* v = b.conv + t * conv_dim + 2 * key_dim + h * dv;
            kc.table.scale(std::exp(b.decay[t * b.gate_stride + h]), state.data(), dk * dv);
            std::copy(v, v + dv, u.begin());
            for (int64_t i = 0; i < dk; ++i)
              kc.table.axpy(-k[i], state.data() + i * dv, u.data(), dv);
            const float beta = b.beta[t * b.gate_stride + h];
            for (int64_t j = 0; j < dv; ++j) u[j] *= beta;
            for (int64_t i = 0; i < dk; ++i)
              kc.table.axpy(k[i], u.data(), state.data() + i * dv, dv);
          }
        }
      },
      1);
  const float* mix = w.mix_bwd.f32();
  for (int64_t t = 0; t < b.rows; ++t) {
    for (int h = 0; h < hv; ++h) {
      const float lambda = kernels::ref::Sigmoid(mix[h]);
      kc.table.axpy(lambda, b.bwd + t * value_dim + h * dv, b.core + t * value_dim + h * dv, dv);
    }
  }
}

}  // namespace

void GdnPreviewBackward(const ForwardContext& fc, int layer, const GdnWeights& w, const float* x,
                        const float* mixed, const float* q_hat, float* core,
                        ForwardScratch& scratch) {
  const ModelConfig& cfg = fc.config;
  const int64_t n = fc.n_rows;
  const int64_t conv_dim = cfg.conv_dim();
  const int64_t value_dim = cfg.value_dim();
  const int hv = cfg.hv;
  // Append groups of the same pass keep their causal output: only preview rows get the branch;
  // groups with a cache ran it in GdnPreviewReuse.
  std::vector<const GroupRows*> previews;
  for (const GroupRows& g : fc.groups)
    if (g.preview() && g.reuse == nullptr) previews.push_back(&g);
  if (previews.empty()) return;

  float* conv = scratch.Get(ForwardScratch::kPreviewBwdConv, n * conv_dim);
  float* gates = scratch.Get(ForwardScratch::kPreviewBwdGates, 2 * n * hv);
  float* beta = gates;
  float* decay = gates + n * hv;
  kernels::MatMul(fc.kc, x, n, cfg.hidden, w.beta_bwd, beta, hv);
  kernels::MatMul(fc.kc, x, n, cfg.hidden, w.alpha_bwd, decay, hv);
  BackwardGates(cfg, w, n, beta, decay, hv);
  float* bwd = scratch.Get(ForwardScratch::kPreviewBwdCore, n * value_dim);
  for (const GroupRows* g : previews) {
    BackwardBlock b;
    b.rows = g->count;
    b.mixed = mixed + g->begin * conv_dim;
    b.mixed_stride = conv_dim;
    b.beta = beta + g->begin * hv;
    b.decay = decay + g->begin * hv;
    b.gate_stride = hv;
    b.q_hat = q_hat + g->begin * conv_dim;
    b.core = core + g->begin * value_dim;
    b.conv = conv + g->begin * conv_dim;
    b.bwd = bwd + g->begin * value_dim;
    RunBackwardBlock(fc, w, b);
  }
  fc.Dump("gdn_bwd_conv", layer, conv, n, conv_dim);
  fc.Dump("gdn_bwd_core", layer, bwd, n, value_dim);
}

void GdnPreviewReuse(const ForwardContext& fc, int layer, const GdnWeights& w, const GroupRows& g,
                     const float* x, const float* mixed, const float* beta, const float* g_decay,
                     float* conv_state, float* recurrent, float* qkv, float* core,
                     ForwardScratch& scratch) {
  const ModelConfig& cfg = fc.config;
  const int64_t conv_dim = cfg.conv_dim();
  const int64_t value_dim = cfg.value_dim();
  const int hv = cfg.hv;
  const PreviewPass& pass = *g.reuse;
  PreviewCache& cache = *pass.cache;
  const int64_t stride = cache.row_stride(layer);
  // Row layout (PreviewCache::gdn_row): pre-conv | beta | g | beta~ | g~.
  const int64_t at_beta = conv_dim, at_g = conv_dim + hv, at_beta_bwd = conv_dim + 2 * hv,
                at_g_bwd = conv_dim + 3 * hv;
  for (int64_t t = 0; t < g.count; ++t) {
    float* row = cache.gdn_row(layer, pass.live[t]);
    const int64_t r = g.begin + t;
    std::copy(mixed + r * conv_dim, mixed + (r + 1) * conv_dim, row);
    std::copy(beta + r * hv, beta + (r + 1) * hv, row + at_beta);
    std::copy(g_decay + r * hv, g_decay + (r + 1) * hv, row + at_g);
  }
  const bool backward = fc.preview_bidirectional && !w.conv_bwd.empty();
  if (backward) {
    // The live rows' backward gates go straight into their cache rows.
    std::vector<float> gates(2 * g.count * hv);
    kernels::MatMul(fc.kc, x + g.begin * cfg.hidden, g.count, cfg.hidden, w.beta_bwd, gates.data(),
                    hv);
    kernels::MatMul(fc.kc, x + g.begin * cfg.hidden, g.count, cfg.hidden, w.alpha_bwd,
                    gates.data() + g.count * hv, hv);
    BackwardGates(cfg, w, g.count, gates.data(), gates.data() + g.count * hv, hv);
    for (int64_t t = 0; t < g.count; ++t) {
      float* row = cache.gdn_row(layer, pass.live[t]);
      std::copy(gates.data() + t * hv, gates.data() + (t + 1) * hv, row + at_beta_bwd);
      std::copy(gates.data() + (g.count + t) * hv, gates.data() + (g.count + t + 1) * hv,
                row + at_g_bwd);
    }
  }

  const int64_t rows = pass.block_rows;
  const float* block = cache.gdn_row(layer, 0);
  float* block_qkv = scratch.Get(ForwardScratch::kReuseQkv, rows * conv_dim);
  float* block_core = scratch.Get(ForwardScratch::kReuseCore, rows * value_dim);
  GdnScanRows(fc, w, rows, block, stride, block + at_beta, block + at_g, stride, conv_state,
              recurrent, block_qkv, block_core);
  if (backward) {
    BackwardBlock b;
    b.rows = rows;
    b.mixed = block;
    b.mixed_stride = stride;
    b.beta = block + at_beta_bwd;
    b.decay = block + at_g_bwd;
    b.gate_stride = stride;
    b.q_hat = block_qkv;
    b.core = block_core;
    b.conv = scratch.Get(ForwardScratch::kPreviewBwdConv, rows * conv_dim);
    b.bwd = scratch.Get(ForwardScratch::kPreviewBwdCore, rows * value_dim);
    RunBackwardBlock(fc, w, b);
  }
  for (int64_t t = 0; t < g.count; ++t) {
    const int64_t j = pass.live[t];
    const int64_t r = g.begin + t;
    std::copy(block_qkv + j * conv_dim, block_qkv + (j + 1) * conv_dim, qkv + r * conv_dim);
    std::copy(block_core + j * value_dim, block_core + (j + 1) * value_dim, core + r * value_dim);
  }
}

}  // namespace clover::model
