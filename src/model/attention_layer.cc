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
namespace {

// Copies the cached K/V of the block rows that are not live in `pass` (the K/V of the last pass
// that computed them) into the scratch rows of kv_dim floats where block row 0 is row `tail_base`.
void FillCachedRows(const PreviewPass& pass, int layer, int64_t kv_dim, int64_t tail_base,
                    float* tail_k, float* tail_v) {
  size_t next_live = 0;
  for (int64_t j = 0; j < pass.block_rows; ++j) {
    if (next_live < pass.live.size() && pass.live[next_live] == j) {
      ++next_live;
      continue;
    }
    const float* cached = pass.cache->kv_row(layer, j);
    std::copy(cached, cached + kv_dim, tail_k + (tail_base + j) * kv_dim);
    std::copy(cached + kv_dim, cached + 2 * kv_dim, tail_v + (tail_base + j) * kv_dim);
  }
}

}  // namespace

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
  kernels::AttentionParams params;
  params.n_head = cfg.n_head;
  params.n_head_kv = cfg.n_head_kv;
  params.head_dim = cfg.head_dim;
  params.scale = 1.0f / std::sqrt(static_cast<float>(dh));
  for (const GroupRows& g : fc.groups) {
    const bool preview = g.preview();
    params.mask = preview ? kernels::MaskMode::kPrefixBlock : kernels::MaskMode::kCausal;
    const SequenceState& seq = preview ? *g.committed : *g.state;
    const int64_t ps = seq.pool().page_size();
    // With a preview cache the pass rows are the live block rows; the block has `block_rows`.
    const PreviewPass* reuse = g.reuse;
    const int64_t block_rows = reuse != nullptr ? reuse->block_rows : g.count;
    // A preview writes its K/V rows into scratch pages that continue the committed pages: the
    // committed rows of the last partial page are copied there, the full pages are shared.
    const int64_t shared_pages = preview ? g.first_pos / ps : 0;
    const int64_t tail_base = g.first_pos - shared_pages * ps;  // scratch row of block row 0
    const int64_t tail_rows = preview ? tail_base + block_rows : 0;
    const int64_t tail_pages = (tail_rows + ps - 1) / ps;
    float* tail_k = nullptr;
    float* tail_v = nullptr;
    if (preview) {
      tail_k = scratch.Get(ForwardScratch::kPreviewK, tail_pages * ps * kv_dim);
      tail_v = scratch.Get(ForwardScratch::kPreviewV, tail_pages * ps * kv_dim);
      seq.PagePointers(layer, g.first_pos, &k_pages, &v_pages);
      if (tail_base > 0) {
        std::copy(k_pages[shared_pages], k_pages[shared_pages] + tail_base * kv_dim, tail_k);
        std::copy(v_pages[shared_pages], v_pages[shared_pages] + tail_base * kv_dim, tail_v);
      }
    }
    for (int64_t t = 0; t < g.count; ++t) {
      const int64_t r = g.begin + t;
      const int64_t pos = g.first_pos + (reuse != nullptr ? reuse->live[t] : t);
      for (int h = 0; h < cfg.n_head; ++h) {
        float* qh = q + r * att_dim + h * dh;
        kernels::ref::RmsNorm(qg + r * q_dim + h * 2 * dh, w.q_norm.f32(), dh, cfg.rms_eps, qh);
        kernels::ref::RopeNeox(qh, cfg.rope_dim, pos, cfg.rope_theta);
      }
      const int64_t tail_at = pos - shared_pages * ps;
      float* k_dst = preview ? tail_k + tail_at * kv_dim : g.state->k_row(layer, pos);
      float* v_dst = preview ? tail_v + tail_at * kv_dim : g.state->v_row(layer, pos);
      for (int j = 0; j < cfg.n_head_kv; ++j) {
        float* kh = k_dst + j * dh;
        kernels::ref::RmsNorm(k + r * kv_dim + j * dh, w.k_norm.f32(), dh, cfg.rms_eps, kh);
        kernels::ref::RopeNeox(kh, cfg.rope_dim, pos, cfg.rope_theta);
      }
      std::copy(v + r * kv_dim, v + (r + 1) * kv_dim, v_dst);
      if (reuse != nullptr) {
        float* cached = reuse->cache->kv_row(layer, pos - g.first_pos);
        std::copy(k_dst, k_dst + kv_dim, cached);
        std::copy(v_dst, v_dst + kv_dim, cached + kv_dim);
      }
    }
    if (reuse != nullptr) FillCachedRows(*reuse, layer, kv_dim, tail_base, tail_k, tail_v);
    const int64_t n_positions = g.first_pos + block_rows;
    if (preview) {
      k_pages.resize(shared_pages + tail_pages);
      v_pages.resize(shared_pages + tail_pages);
      for (int64_t pg = 0; pg < tail_pages; ++pg) {
        k_pages[shared_pages + pg] = tail_k + pg * ps * kv_dim;
        v_pages[shared_pages + pg] = tail_v + pg * ps * kv_dim;
      }
    } else {
      seq.PagePointers(layer, n_positions, &k_pages, &v_pages);
    }
    kernels::KvPagesView kv;
    kv.k_pages = k_pages.data();
    kv.v_pages = v_pages.data();
    kv.page_size = ps;
    kv.row_stride = kv_dim;
    kv.n_positions = n_positions;
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
