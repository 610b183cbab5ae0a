// AVX-512 matmul: register tiles of up to 4 activation rows x 4 weight rows, 16 lanes per step,
// inside L2-sized weight blocks;
// BF16/F16 weights are widened to f32 in registers (exact), so only the summation order differs
// from the reference.
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/isa_kernels.h"

namespace clover::kernels::avx512 {
namespace {

struct LoadF32 {
  static constexpr int kBytes = 4;
  static __m512 Full(const uint8_t* p) { return _mm512_loadu_ps(p); }
  static __m512 Masked(const uint8_t* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
};

struct LoadBF16 {
  static constexpr int kBytes = 2;
  static __m512 Widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m512 Full(const uint8_t* p) {
    return Widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 Masked(const uint8_t* p, __mmask16 m) {
    return Widen(_mm256_maskz_loadu_epi16(m, p));
  }
};

struct LoadF16 {
  static constexpr int kBytes = 2;
  static __m512 Full(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 Masked(const uint8_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
};

// One R x O tile: rows x[0..R) against weight rows w[0..O).
template <typename Load, int R, int O>
inline void Tile(const float* x, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                 int64_t in, float* y, int64_t y_stride) {
  __m512 acc[R][O];
  for (int r = 0; r < R; ++r)
    for (int o = 0; o < O; ++o) acc[r][o] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= in; i += 16) {
    __m512 wv[O];
    for (int o = 0; o < O; ++o) wv[o] = Load::Full(w + o * w_row_bytes + i * Load::kBytes);
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_loadu_ps(x + r * x_stride + i);
      for (int o = 0; o < O; ++o) acc[r][o] = _mm512_fmadd_ps(xv, wv[o], acc[r][o]);
    }
  }
  if (i < in) {
    const __mmask16 m = static_cast<__mmask16>((1u << (in - i)) - 1);
    __m512 wv[O];
    for (int o = 0; o < O; ++o) wv[o] = Load::Masked(w + o * w_row_bytes + i * Load::kBytes, m);
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + r * x_stride + i);
      for (int o = 0; o < O; ++o) acc[r][o] = _mm512_fmadd_ps(xv, wv[o], acc[r][o]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int o = 0; o < O; ++o) y[r * y_stride + o] = _mm512_reduce_add_ps(acc[r][o]);
}

// Registers hold 4 activation rows x 4 weight rows of accumulators.
constexpr int kTileRows = 4;

}  // namespace

#include "kernels/cpu/matmul_tiling-inl.h"

}  // namespace clover::kernels::avx512
