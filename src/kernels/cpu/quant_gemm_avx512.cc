// AVX-512 quantized GEMM for many activation rows (prefill, MoE expert batches): the outer-product
// form of quant_matmul-inl.h's dot products. The 16 int32 lanes of an accumulator are 16 weight
// rows; each vpdpbusd multiplies a zmm of 4 weight levels per row by 4 activation bytes broadcast
// to every lane. A 16-row tile of weights is decoded once (quant_gemm_tiles-inl.h) and then meets
// every activation row, so the unpacking that the one-row kernel repeats per activation row is
// paid once per tile.
//
// Per activation row, a sub-block's int32 vpdpbusd sum meets its scale once: converted and
// multiplied by the scale in f32 (one FMA; measured faster than vpmulld on Zen 5, and exact while
// the products and their sum stay below 2^24). The Q4_K min and Q6_K offset terms come from the
// ActBlock half sums (vpdpwssd, exact in int32); the f16 scales meet the total once per
// super-block.
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/quantize.h"

namespace clover::kernels::avx512 {

#include "kernels/cpu/quant_gemm_tiles-inl.h"

namespace {

// Activation rows per register group: each decoded weight zmm is loaded once per group, and the
// group's accumulators (3 zmm per row) still fit in the 32 registers.
constexpr int kGroupRows = 8;

// AccumulateVnni<R>(tile, x, nb, unit, acc) adds the unit's products with the R activation rows
// x, x + nb, ... to acc[0..R) (lane o: weight row o).

template <int R>
void AccumulateVnni(const FormatQ8_0::Tile& t, const ActBlock* x, int64_t nb, int64_t unit,
                    __m512 acc[R]) {
  // (-128, -128) against the half sums: -128 * sum(x).
  const __m512i minus128 = _mm512_set1_epi32(static_cast<int32_t>(0xFF80FF80u));
  const ActBlock* a = x + unit * FormatQ8_0::kUnitBlocks;
  for (int b = 0; b < t.n_blocks; ++b) {
    __m512i sum[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      sum[r] = _mm512_dpwssd_epi32(_mm512_setzero_si512(), minus128, Broadcast4(a[r * nb + b].sum));
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const __m512i w = t.levels[b][k];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        sum[r] = _mm512_dpbusd_epi32(sum[r], w, Broadcast4(a[r * nb + b].q + 4 * k));
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 scale = _mm512_mul_ps(t.d[b], _mm512_set1_ps(a[r * nb + b].d));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[r]), scale, acc[r]);
    }
  }
}

// The K formats share one activation scale per super-block (MatMul quantizes with scale_block
// 256), so a unit is one super-block and its integer sum meets the float scales once.
// Bounds per lane: a Q4_K sub-block sum |S| <= 32 * 15 * 127 < 2^16, times a scale <= 63 < 2^22;
// mins 8 * 63 * 32 * 127 < 2^21. Q6_K |S| <= 16 * 63 * 127 < 2^17, times |scale| <= 128 < 2^24;
// the offset 32 * 128 * 256 * 127 < 2^28 in int32. Only super-block totals beyond 2^24 (far
// from typical data) round, by one f32 ulp.

// The K formats' super-block of 256 levels (k = element / 4 in `levels`) against R rows of 8
// activation blocks: total[r] = sum over sub-blocks of scale * (int32 dot of the sub-block).
// The rows' levels are addressed from one pointer per row plus the sub-block's byte offset,
// computed once per sub-block: indexing a[r * nb + e / 32].q + e % 32 at every broadcast cost
// four or five scalar instructions per vpdpbusd, as many as the vector work (perf, Zen 5).
template <int R, int kSubBlocks, int kSubElems>
inline void ScaledSubBlockSums(const __m512i* levels, const __m512* scales, const ActBlock* a,
                               int64_t nb, __m512 total[R]) {
  static_assert(kActBlockSize % kSubElems == 0);
  const uint8_t* row_q[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    total[r] = _mm512_setzero_ps();
    row_q[r] = reinterpret_cast<const uint8_t*>(a[r * nb].q);
  }
  for (int s = 0; s < kSubBlocks; ++s) {
    const int64_t at = (s * kSubElems / kActBlockSize) * static_cast<int64_t>(sizeof(ActBlock)) +
                       s * kSubElems % kActBlockSize;
    __m512i sum[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) sum[r] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int k = 0; k < kSubElems / 4; ++k) {
      const __m512i w = levels[s * (kSubElems / 4) + k];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        sum[r] = _mm512_dpbusd_epi32(sum[r], w, Broadcast4(row_q[r] + at + 4 * k));
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[r]), scales[s], total[r]);
  }
}

template <int R>
void AccumulateVnni(const FormatQ4_K::Tile& t, const ActBlock* x, int64_t nb, int64_t unit,
                    __m512 acc[R]) {
  const ActBlock* a = x + unit * 8;
  __m512 total[R];
  ScaledSubBlockSums<R, 8, 32>(t.levels, t.scales, a, nb, total);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512i mins = _mm512_setzero_si512();
    for (int j = 0; j < 8; ++j)
      mins = _mm512_dpwssd_epi32(mins, t.min_pairs[j], Broadcast4(a[r * nb + j].sum));
    const __m512 dx = _mm512_set1_ps(a[r * nb].d);
    acc[r] = _mm512_fmadd_ps(total[r], _mm512_mul_ps(t.d, dx), acc[r]);
    acc[r] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mins), _mm512_mul_ps(t.dmin, dx), acc[r]);
  }
}

template <int R>
void AccumulateVnni(const FormatQ6_K::Tile& t, const ActBlock* x, int64_t nb, int64_t unit,
                    __m512 acc[R]) {
  const ActBlock* a = x + unit * 8;
  __m512 total[R];
  ScaledSubBlockSums<R, 16, 16>(t.levels, t.scales, a, nb, total);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512i offset = _mm512_setzero_si512();
    for (int g = 0; g < 8; ++g)
      offset = _mm512_dpwssd_epi32(offset, t.offset_pairs[g], Broadcast4(a[r * nb + g].sum));
    const __m512 scale = _mm512_mul_ps(t.d, _mm512_set1_ps(a[r * nb].d));
    acc[r] = _mm512_fmadd_ps(_mm512_add_ps(total[r], _mm512_cvtepi32_ps(offset)), scale, acc[r]);
  }
}

// R activation rows against every unit of a decoded tile; lanes of `mask` go to y.
template <typename Format, int R>
void RowGroup(const typename Format::Tile* tiles, int64_t n_units, const ActBlock* x, int64_t nb,
              __mmask16 mask, float* y, int64_t y_stride) {
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t u = 0; u < n_units; ++u) AccumulateVnni<R>(tiles[u], x, nb, u, acc);
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * y_stride, mask, acc[r]);
}

// RowGroup for the last n_rows < R rows.
template <typename Format, int R>
void RowGroupUpTo(int n_rows, const typename Format::Tile* tiles, int64_t n_units,
                  const ActBlock* x, int64_t nb, __mmask16 mask, float* y, int64_t y_stride) {
  if constexpr (R > 1) {
    if (n_rows < R) {
      RowGroupUpTo<Format, R - 1>(n_rows, tiles, n_units, x, nb, mask, y, y_stride);
      return;
    }
  }
  RowGroup<Format, R>(tiles, n_units, x, nb, mask, y, y_stride);
}

template <typename Format>
void QuantGemm(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes, int64_t in,
               int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  const int64_t nb = in / kActBlockSize;
  ForEachWeightTile<Format>(
      w, w_row_bytes, in, o_begin, o_end,
      [&](const typename Format::Tile* tiles, int64_t n_units, int64_t o0, TileRows rows) {
        const __mmask16 mask = rows.ValidMask();
        int64_t r = 0;
        for (; r + kGroupRows <= n_rows; r += kGroupRows)
          RowGroup<Format, kGroupRows>(tiles, n_units, x + r * nb, nb, mask, y + r * y_stride + o0,
                                       y_stride);
        if (r < n_rows)
          RowGroupUpTo<Format, kGroupRows - 1>(static_cast<int>(n_rows - r), tiles, n_units,
                                               x + r * nb, nb, mask, y + r * y_stride + o0,
                                               y_stride);
      });
}

}  // namespace

void QuantGemmQ8_0(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                   int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  QuantGemm<FormatQ8_0>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void QuantGemmQ4_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                   int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  QuantGemm<FormatQ4_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void QuantGemmQ6_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                   int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  QuantGemm<FormatQ6_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

}  // namespace clover::kernels::avx512
