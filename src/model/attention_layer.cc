// Attention layer: q/gate split per head, q/k norms, partial NeoX RoPE, paged KV, sigmoid gate.
#include "model/attention_layer.h"

#include <algorithm>
#include <cmath>

#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/rms_norm.h"
#include "kernels/ref/rope.h"

namespace clover::model {

void AttentionForward(const ForwardContext& fc, int layer, const AttentionWeights& w,
                      const float* x, float* out, ForwardScratch& scratch) {
  const ModelConfig& cfg = fc.config;
  const kernels::KernelContext& kc = fc.kc;
  const int64_t n = fc.n_rows;
  const int64_t hidden = cfg.hidden;
  const int64_t dh = cfg.head_dim;
  const int64_t q_dim = cfg.q_proj_dim();  // per head [query | gate]
  const int64_t att_dim = int64_t{cfg.n_head} * dh;
  const int64_t kv_dim = cfg.kv_dim();

  float* qg = scratch.Get(ForwardScratch::kProjA, n * q_dim);
  float* k = scratch.Get(ForwardScratch::kProjB, n * kv_dim);
  float* v = scratch.Get(ForwardScratch::kProjC, n * kv_dim);
  float* q = scratch.Get(ForwardScratch::kProjD, n * att_dim);
  float* att = scratch.Get(ForwardScratch::kCore, n * att_dim);
  kernels::MatMul(kc, x, n, hidden, w.q, qg, q_dim);
  kernels::MatMul(kc, x, n, hidden, w.k, k, kv_dim);
  kernels::MatMul(kc, x, n, hidden, w.v, v, kv_dim);

  std::vector<const float*> k_pages, v_pages;
  for (const GroupRows& g : fc.groups) {
    for (int64_t t = 0; t < g.count; ++t) {
      const int64_t r = g.begin + t;
      const int64_t pos = g.first_pos + t;
      for (int h = 0; h < cfg.n_head; ++h) {
        float* qh = q + r * att_dim + h * dh;
        kernels::ref::RmsNorm(qg + r * q_dim + h * 2 * dh, w.q_norm.f32(), dh, cfg.rms_eps, qh);
        kernels::ref::RopeNeox(qh, cfg.rope_dim, pos, cfg.rope_theta);
      }
      float* k_dst = g.state->k_row(layer, pos);
      for (int j = 0; j < cfg.n_head_kv; ++j) {
        float* kh = k_dst + j * dh;
        kernels::ref::RmsNorm(k + r * kv_dim + j * dh, w.k_norm.f32(), dh, cfg.rms_eps, kh);
        kernels::ref::RopeNeox(kh, cfg.rope_dim, pos, cfg.rope_theta);
      }
      std::copy(v + r * kv_dim, v + (r + 1) * kv_dim, g.state->v_row(layer, pos));
    }
    const int64_t n_positions = g.first_pos + g.count;
    g.state->PagePointers(layer, n_positions, &k_pages, &v_pages);
    kernels::KvPagesView kv;
    kv.k_pages = k_pages.data();
    kv.v_pages = v_pages.data();
    kv.page_size = g.state->pool().page_size();
    kv.row_stride = kv_dim;
    kv.n_positions = n_positions;
    kernels::AttentionParams params;
    params.n_head = cfg.n_head;
    params.n_head_kv = cfg.n_head_kv;
    params.head_dim = cfg.head_dim;
    params.scale = 1.0f / std::sqrt(static_cast<float>(dh));
    params.mask = kernels::MaskMode::kCausal;
    kernels::Attention(kc, params, q + g.begin * att_dim, att_dim, g.count, g.first_pos, kv,
                       att + g.begin * att_dim, att_dim);
  }
  for (int64_t r = 0; r < n; ++r) {
    for (int h = 0; h < cfg.n_head; ++h) {
      const float* gate = qg + r * q_dim + h * 2 * dh + dh;
      float* a = att + r * att_dim + h * dh;
      for (int64_t d = 0; d < dh; ++d) a[d] *= kernels::ref::Sigmoid(gate[d]);
    }
  }
  kernels::MatMul(kc, att, n, att_dim, w.o, out, hidden);
  fc.Dump("attn_output", layer, out, n, hidden);
}

}  // namespace clover::model
