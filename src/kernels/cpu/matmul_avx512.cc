// AVX-512 matmul: register tiles of up to 4 activation rows x 4 weight rows, 16 lanes per step,
// inside L2-sized weight blocks;
// BF16/F16 weights are widened to f32 in registers (exact), so only the summation order differs
// from the reference.
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/kernels_avx512.h"

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

// The n_rows (<= 4) activation rows at `x` against the weight rows at `w`.
template <typename Load, int O>
inline void RowTile(const float* x, int64_t n_rows, int64_t x_stride, const uint8_t* w,
                    int64_t w_row_bytes, int64_t in, float* y, int64_t y_stride) {
  switch (n_rows) {
    case 4:
      Tile<Load, 4, O>(x, x_stride, w, w_row_bytes, in, y, y_stride);
      break;
    case 3:
      Tile<Load, 3, O>(x, x_stride, w, w_row_bytes, in, y, y_stride);
      break;
    case 2:
      Tile<Load, 2, O>(x, x_stride, w, w_row_bytes, in, y, y_stride);
      break;
    case 1:
      Tile<Load, 1, O>(x, x_stride, w, w_row_bytes, in, y, y_stride);
      break;
    default:
      break;
  }
}

// Weight rows in L2-sized blocks of kWeightBlock: within a block, each activation tile is
// loaded once into L1 and meets every weight row of the block, so activations stream from
// memory once per block and weights once per call.
constexpr int64_t kWeightBlock = 64;

template <typename Load>
void MatMul(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
            int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  const auto* wb = static_cast<const uint8_t*>(w);
  for (int64_t ob = o_begin; ob < o_end; ob += kWeightBlock) {
    const int64_t oe = std::min(o_end, ob + kWeightBlock);
    for (int64_t r0 = 0; r0 < n_rows; r0 += 4) {
      const int64_t nr = std::min<int64_t>(4, n_rows - r0);
      const float* xr = x + r0 * x_stride;
      float* yr = y + r0 * y_stride;
      int64_t o = ob;
      for (; o + 4 <= oe; o += 4)
        RowTile<Load, 4>(xr, nr, x_stride, wb + o * w_row_bytes, w_row_bytes, in, yr + o, y_stride);
      for (; o < oe; ++o)
        RowTile<Load, 1>(xr, nr, x_stride, wb + o * w_row_bytes, w_row_bytes, in, yr + o, y_stride);
    }
  }
}

}  // namespace

void MatMulF32(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  MatMul<LoadF32>(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void MatMulBF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride) {
  MatMul<LoadBF16>(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void MatMulF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  MatMul<LoadF16>(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

}  // namespace clover::kernels::avx512
