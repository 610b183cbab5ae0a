// Blockwise (online-softmax) multi-head attention over a paged KV cache; memory O(block), not
// O(T^2).
#pragma once

#include <cstdint>

#include "kernels/kernel_context.h"

namespace clover::kernels {

// Which keys a query row may see.
enum class MaskMode {
  kCausal,       // row at position p sees keys at positions <= p
  kPrefixBlock,  // every row sees every key: the committed prefix plus the whole (bidirectional)
                 // block
};

// Keys/values of positions [0, n_positions): position p lives in page p / page_size at row
// p % page_size; each row holds `row_stride` floats, kv head j at offset j * head_dim.
struct KvPagesView {
  const float* const* k_pages = nullptr;
  const float* const* v_pages = nullptr;
  int64_t page_size = 0;
  int64_t row_stride = 0;
  int64_t n_positions = 0;
};

struct AttentionParams {
  int n_head = 0;
  int n_head_kv = 0;  // query head h reads kv head h / (n_head / n_head_kv)
  int head_dim = 0;
  float scale = 1.0f;
  MaskMode mask = MaskMode::kCausal;
};

// For each query row i (position first_pos + i) and head h: out = softmax(scale * q k^T) v over
// the visible keys. q rows hold n_head * head_dim floats (head-major); so do out rows.
void Attention(const KernelContext& ctx, const AttentionParams& params, const float* q,
               int64_t q_stride, int64_t n_rows, int64_t first_pos, const KvPagesView& kv,
               float* out, int64_t out_stride);

}  // namespace clover::kernels
