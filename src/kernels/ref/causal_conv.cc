// Causal depthwise conv + SiLU; the window reads the carried state for the first K-1 rows.
#include "kernels/ref/causal_conv.h"

#include <algorithm>
#include <vector>

#include "kernels/ref/activations.h"

namespace clover::kernels::ref {

void CausalConvSilu(const float* m, int64_t m_stride, int64_t n_rows, int64_t channels, int K,
                    const float* w, float* state, float* out, int64_t out_stride) {
  const int hist = K - 1;
  auto row = [&](int64_t tau) -> const float* {  // tau may be negative: state rows
    return tau >= 0 ? m + tau * m_stride : state + (hist + tau) * channels;
  };
  for (int64_t t = 0; t < n_rows; ++t) {
    float* o = out + t * out_stride;
    for (int64_t c = 0; c < channels; ++c) {
      float acc = 0.0f;
      for (int j = 0; j < K; ++j) acc += w[c * K + j] * row(t - hist + j)[c];
      o[c] = Silu(acc);
    }
  }
  // New state: the last `hist` rows of (state ++ m).
  std::vector<float> next(static_cast<size_t>(hist) * channels);
  for (int j = 0; j < hist; ++j) {
    const float* src = row(n_rows - hist + j);
    std::copy(src, src + channels, next.begin() + static_cast<int64_t>(j) * channels);
  }
  std::copy(next.begin(), next.end(), state);
}

}  // namespace clover::kernels::ref
