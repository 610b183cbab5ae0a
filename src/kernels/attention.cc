// Attention: per (block of query rows, head) an online softmax over key blocks (running max,
// rescaled sums per row).
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace clover::kernels {
namespace {
constexpr int64_t kKeyBlock = 64;
// Query rows of one head that share each key block: their scores are one matmul against the
// block's K rows and their outputs one GEMM with its V rows, instead of a dot and an axpy per
// (row, key).
constexpr int64_t kQueryBlock = 16;
}  // namespace

void Attention(const KernelContext& ctx, const AttentionParams& params, const float* q,
               int64_t q_stride, int64_t n_rows, int64_t first_pos, const KvPagesView& kv,
               float* out, int64_t out_stride) {
  const KernelTable& kt = ctx.table;
  const MatMulFn scores_of = kt.matmul[static_cast<int>(WeightType::kF32)];
  const int group = params.n_head / params.n_head_kv;
  const int64_t dh = params.head_dim;
  const int64_t n_row_blocks = (n_rows + kQueryBlock - 1) / kQueryBlock;
  const int64_t n_items = n_row_blocks * params.n_head;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  ctx.pool.ParallelFor(n_items, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(kQueryBlock * kKeyBlock), acc(kQueryBlock * dh);
    std::vector<float> running_max(kQueryBlock), denom(kQueryBlock);
    std::vector<int64_t> visible(kQueryBlock);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t r0 = (item / params.n_head) * kQueryBlock;
      const int64_t nr = std::min(kQueryBlock, n_rows - r0);
      const int h = static_cast<int>(item % params.n_head);
      const int64_t kv_off = static_cast<int64_t>(h / group) * dh;
      const float* qh = q + r0 * q_stride + h * dh;
      int64_t n_keys = 0;
      for (int64_t i = 0; i < nr; ++i) {
        visible[i] = params.mask == MaskMode::kCausal
                         ? std::min(kv.n_positions, first_pos + r0 + i + 1)
                         : kv.n_positions;
        n_keys = std::max(n_keys, visible[i]);
      }
      std::fill(running_max.begin(), running_max.end(), neg_inf);
      std::fill(denom.begin(), denom.end(), 0.0f);
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t k0 = 0; k0 < n_keys;) {
        // A key block never crosses a page: its K and V rows are then evenly strided.
        const int64_t in_page = k0 % kv.page_size;
        const int64_t nb = std::min({kKeyBlock, n_keys - k0, kv.page_size - in_page});
        const float* kr = kv.k_pages[k0 / kv.page_size] + in_page * kv.row_stride + kv_off;
        const float* vr = kv.v_pages[k0 / kv.page_size] + in_page * kv.row_stride + kv_off;
        scores_of(qh, nr, q_stride, kr, kv.row_stride * static_cast<int64_t>(sizeof(float)), dh,
                  0, nb, scores.data(), kKeyBlock);
        for (int64_t i = 0; i < nr; ++i) {
          float* s = scores.data() + i * kKeyBlock;
          const int64_t seen = std::clamp<int64_t>(visible[i] - k0, 0, nb);
          float block_max = running_max[i];
          for (int64_t j = 0; j < seen; ++j) {
            s[j] *= params.scale;
            block_max = std::max(block_max, s[j]);
          }
          if (block_max > running_max[i]) {
            const float r = std::exp(running_max[i] - block_max);
            denom[i] *= r;
            kt.scale(r, acc.data() + i * dh, dh);
            running_max[i] = block_max;
          }
          for (int64_t j = 0; j < seen; ++j) {
            s[j] = std::exp(s[j] - running_max[i]);
            denom[i] += s[j];
          }
          std::fill(s + seen, s + nb, 0.0f);  // keys this row may not see
        }
        kt.gemm(scores.data(), kKeyBlock, vr, kv.row_stride, nr, nb, dh, acc.data(), dh, true);
        k0 += nb;
      }
      for (int64_t i = 0; i < nr; ++i) {
        float* oh = out + (r0 + i) * out_stride + h * dh;
        const float inv = denom[i] > 0.0f ? 1.0f / denom[i] : 0.0f;
        for (int64_t d = 0; d < dh; ++d) oh[d] = acc[i * dh + d] * inv;
      }
    }
  });
}

}  // namespace clover::kernels
