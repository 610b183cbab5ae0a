// Attention: per (row, head) an online softmax over key blocks (running max, rescaled sums).
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace clover::kernels {
namespace {
constexpr int64_t kKeyBlock = 64;
}  // namespace

void Attention(const KernelContext& ctx, const AttentionParams& params, const float* q,
               int64_t q_stride, int64_t n_rows, int64_t first_pos, const KvPagesView& kv,
               float* out, int64_t out_stride) {
  const KernelTable& kt = ctx.table;
  const int group = params.n_head / params.n_head_kv;
  const int64_t dh = params.head_dim;
  const int64_t n_items = n_rows * params.n_head;
  ctx.pool.ParallelFor(n_items, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(kKeyBlock);
    std::vector<float> acc(dh);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t row = item / params.n_head;
      const int h = static_cast<int>(item % params.n_head);
      const int64_t kv_off = static_cast<int64_t>(h / group) * dh;
      const float* qh = q + row * q_stride + h * dh;
      const int64_t n_visible = params.mask == MaskMode::kCausal
                                    ? std::min(kv.n_positions, first_pos + row + 1)
                                    : kv.n_positions;
      float running_max = -std::numeric_limits<float>::infinity();
      float denom = 0.0f;
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t k0 = 0; k0 < n_visible; k0 += kKeyBlock) {
        const int64_t nb = std::min(kKeyBlock, n_visible - k0);
        float block_max = running_max;
        for (int64_t j = 0; j < nb; ++j) {
          const int64_t p = k0 + j;
          const float* kr = kv.k_pages[p / kv.page_size] + (p % kv.page_size) * kv.row_stride;
          scores[j] = params.scale * kt.dot(qh, kr + kv_off, dh);
          block_max = std::max(block_max, scores[j]);
        }
        if (block_max > running_max) {
          const float r = std::exp(running_max - block_max);
          denom *= r;
          kt.scale(r, acc.data(), dh);
          running_max = block_max;
        }
        for (int64_t j = 0; j < nb; ++j) {
          const int64_t p = k0 + j;
          const float e = std::exp(scores[j] - running_max);
          denom += e;
          const float* vr = kv.v_pages[p / kv.page_size] + (p % kv.page_size) * kv.row_stride;
          kt.axpy(e, vr + kv_off, acc.data(), dh);
        }
      }
      float* oh = out + row * out_stride + h * dh;
      const float inv = denom > 0.0f ? 1.0f / denom : 0.0f;
      for (int64_t d = 0; d < dh; ++d) oh[d] = acc[d] * inv;
    }
  });
}

}  // namespace clover::kernels
