// AVX2 matmul: register tiles of up to 2 activation rows x 4 weight rows, 8 lanes per step,
// scalar tail; BF16/F16 weights are widened to f32 in registers (exact).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "core/dtype.h"
#include "kernels/cpu/isa_kernels.h"

namespace clover::kernels::avx2 {
namespace {

struct LoadF32 {
  static constexpr int kBytes = 4;
  static __m256 Full(const uint8_t* p) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  }
  static float One(const uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
};

struct LoadBF16 {
  static constexpr int kBytes = 2;
  static __m256 Full(const uint8_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static float One(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return BF16ToF32(h);
  }
};

struct LoadF16 {
  static constexpr int kBytes = 2;
  static __m256 Full(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float One(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return F16ToF32(h);
  }
};

inline float HorizontalSum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

template <typename Load, int R, int O>
inline void Tile(const float* x, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                 int64_t in, float* y, int64_t y_stride) {
  __m256 acc[R][O];
  for (int r = 0; r < R; ++r)
    for (int o = 0; o < O; ++o) acc[r][o] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= in; i += 8) {
    __m256 wv[O];
    for (int o = 0; o < O; ++o) wv[o] = Load::Full(w + o * w_row_bytes + i * Load::kBytes);
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * x_stride + i);
      for (int o = 0; o < O; ++o) acc[r][o] = _mm256_fmadd_ps(xv, wv[o], acc[r][o]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int o = 0; o < O; ++o) {
      float s = HorizontalSum(acc[r][o]);
      for (int64_t j = i; j < in; ++j)
        s += x[r * x_stride + j] * Load::One(w + o * w_row_bytes + j * Load::kBytes);
      y[r * y_stride + o] = s;
    }
  }
}

// Registers hold 2 activation rows x 4 weight rows of accumulators.
constexpr int kTileRows = 2;

}  // namespace

#include "kernels/cpu/matmul_tiling-inl.h"

}  // namespace clover::kernels::avx2
