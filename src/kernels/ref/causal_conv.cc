// Causal depthwise conv + SiLU; the window reads the carried state for the first K-1 rows.
#include "kernels/ref/causal_conv.h"

#include <algorithm>
#include <vector>

#include "kernels/ref/activations.h"

namespace clover::kernels::ref {
namespace {

// Row tau of (state ++ m); tau may be negative: state rows.
const float* WindowRow(const float* m, int64_t m_stride, const float* state, int64_t channels,
                       int hist, int64_t tau) {
  return tau >= 0 ? m + tau * m_stride : state + (hist + tau) * channels;
}

}  // namespace

void CausalConvSiluRows(const float* m, int64_t m_stride, int64_t t_begin, int64_t t_end,
                        int64_t channels, int K, const float* w, const float* state, float* out,
                        int64_t out_stride) {
  const int hist = K - 1;
  // Taps as [K][channels] and one accumulator row, so that the channel loops are contiguous
  // (and vectorize) instead of striding through w by K. Kept per thread: decode calls this once
  // per GDN layer and token, and a fresh 128 KiB buffer would be a fresh mapping each time.
  thread_local std::vector<float> taps, acc;
  taps.resize(static_cast<size_t>(K) * channels);
  acc.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c)
    for (int j = 0; j < K; ++j) taps[j * channels + c] = w[c * K + j];
  for (int64_t t = t_begin; t < t_end; ++t) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int j = 0; j < K; ++j) {
      const float* x = WindowRow(m, m_stride, state, channels, hist, t - hist + j);
      const float* tap = taps.data() + j * channels;
      for (int64_t c = 0; c < channels; ++c) acc[c] += tap[c] * x[c];
    }
    float* o = out + t * out_stride;
    for (int64_t c = 0; c < channels; ++c) o[c] = Silu(acc[c]);
  }
}

void CausalConvShiftState(const float* m, int64_t m_stride, int64_t n_rows, int64_t channels,
                          int K, float* state) {
  const int hist = K - 1;
  // New state: the last `hist` rows of (state ++ m).
  std::vector<float> next(static_cast<size_t>(hist) * channels);
  for (int j = 0; j < hist; ++j) {
    const float* src = WindowRow(m, m_stride, state, channels, hist, n_rows - hist + j);
    std::copy(src, src + channels, next.begin() + static_cast<int64_t>(j) * channels);
  }
  std::copy(next.begin(), next.end(), state);
}

void CausalConvSilu(const float* m, int64_t m_stride, int64_t n_rows, int64_t channels, int K,
                    const float* w, float* state, float* out, int64_t out_stride) {
  CausalConvSiluRows(m, m_stride, 0, n_rows, channels, K, w, state, out, out_stride);
  CausalConvShiftState(m, m_stride, n_rows, channels, K, state);
}

}  // namespace clover::kernels::ref
