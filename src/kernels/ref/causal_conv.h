// Causal depthwise conv + SiLU over time with a carried state (architecture.md §3.2 step 2).
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

// For t in [0, n_rows): out[t][c] = SiLU(sum_j w[c][j] * m[t - (K-1) + j][c]), where rows before
// t = 0 come from `state` ([K-1][channels], oldest first). Then `state` becomes the last K-1
// pre-conv rows. `w` is [channels][K], tap K-1 multiplies the current row.
void CausalConvSilu(const float* m, int64_t m_stride, int64_t n_rows, int64_t channels, int K,
                    const float* w, float* state, float* out, int64_t out_stride);

// CausalConvSilu in two steps, so that the rows can be split over threads: output rows
// [t_begin, t_end) with `state` read only, then the state update once all rows are done.
void CausalConvSiluRows(const float* m, int64_t m_stride, int64_t t_begin, int64_t t_end,
                        int64_t channels, int K, const float* w, const float* state, float* out,
                        int64_t out_stride);
void CausalConvShiftState(const float* m, int64_t m_stride, int64_t n_rows, int64_t channels,
                          int K, float* state);

}  // namespace clover::kernels::ref
