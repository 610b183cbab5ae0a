// AVX2 quantized GEMM for many activation rows (prefill, diffusion passes, MoE expert batches) of
// the K formats: the outer-product form of quant_matmul-inl.h's dot products, as in
// quant_gemm_avx512.cc, on 256-bit registers and without VNNI.
//
// A 16-row tile of one super-block of weights is decoded once into levels[k][2]: ymm h holds
// elements 4k..4k+3 of weight rows 8h..8h+7, one row per dword lane. Each activation row then
// broadcasts 4 bytes to every lane, and `vpmaddubsw` multiplies them with 8 rows' 4 levels into
// 16 int16 pair sums. The pair sums of a whole sub-block add up in int16 (Q4_K: 8 steps x
// 2 x 15 x 127 = 30480; Q6_K: 2 steps x 2 x 63 x 127 = 32004, both below 2^15, the activations
// being in [-127, 127]), and only then does `vpmaddwd` multiply them by the sub-block scale into
// int32. The one-row kernel (quant_matmul-inl.h) pays a `vpmaddwd` after every `vpmaddubsw`, per
// 32 levels and per activation row, and Zen 3 issues both on its two multiply pipes; it is also
// where the levels are unpacked again for every 4 activation rows (39-45 GFLOP/s a core at 64 rows,
// against ~100 here: docs/benchmarks.md).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/quantize.h"

namespace clover::kernels::avx2 {
namespace {

constexpr int kTileRows = static_cast<int>(kQuantGemmTileRows);  // two ymm of 8 dword lanes
// Activation rows per register group: each decoded weight ymm loaded once per group.
constexpr int kGroupRows = 2;

inline float HalfToFloat(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

inline __m256i Load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

inline __m256i Broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// In place: r[c] becomes column c of the 8x8 dword matrix whose row o was r[o].
inline void Transpose8x8(__m256i r[8]) {
  __m256i t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // Each 128-bit lane l of r[4i + j] now holds rows 4i..4i+3 of column 4l + j.
  for (int i = 0; i < 2; ++i) {
    r[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm256_permute2x128_si256(r[j], r[4 + j], 0x20);
    t[4 + j] = _mm256_permute2x128_si256(r[j], r[4 + j], 0x31);
  }
  for (int c = 0; c < 8; ++c) r[c] = t[c];
}

// The rows of one tile: row o's current super-block starts at `base + o * row_bytes`; rows from
// `valid` on (past the matrix's end) read as zero.
struct TileRows {
  const uint8_t* base;
  int64_t row_bytes;
  int valid;

  // The 8 dwords at `offset` of rows 8h..8h+7, transposed: out[i] = dword i of each row.
  void Transposed(int h, int64_t offset, __m256i out[8]) const {
    for (int i = 0; i < 8; ++i) {
      const int o = 8 * h + i;
      out[i] = o < valid ? Load256(base + o * row_bytes + offset) : _mm256_setzero_si256();
    }
    Transpose8x8(out);
  }
};

// (v, v) as the two int16 halves of a dword: the operand that `vpmaddwd` multiplies both pair
// sums of a lane by.
inline int32_t Pair16(int v) {
  const uint32_t u = static_cast<uint16_t>(static_cast<int16_t>(v));
  return static_cast<int32_t>(u | u << 16);
}

// Each format: `Tile` (one super-block of 16 weight rows, decoded), `Decode(rows, tile)`, and
// `Accumulate<R>(tile, a, nb, acc)`, which adds the tile's products with the R activation rows
// a, a + nb, ... (this super-block's 8 ActBlocks each) to acc[r][h] (lane i: weight row 8h + i).

struct FormatQ4_K {
  static constexpr int64_t kBlockBytes = 144;
  struct Tile {
    __m256i levels[64][2];  // 0..15
    alignas(32) int32_t scale_pairs[8][kTileRows];
    alignas(32) int32_t min_pairs[8][kTileRows];
    alignas(32) float d[kTileRows];
    alignas(32) float dmin[kTileRows];
  };

  static void Decode(const TileRows& rows, Tile* t) {
    for (int o = 0; o < kTileRows; ++o) {
      if (o >= rows.valid) {
        t->d[o] = t->dmin[o] = 0.0f;
        for (int j = 0; j < 8; ++j) t->scale_pairs[j][o] = t->min_pairs[j][o] = 0;
        continue;
      }
      const uint8_t* blk = rows.base + o * rows.row_bytes;
      t->d[o] = HalfToFloat(blk);
      t->dmin[o] = HalfToFloat(blk + 2);
      const uint8_t* s = blk + 4;  // ref/dequantize.cc's 12-byte scale layout
      for (int j = 0; j < 4; ++j) {
        t->scale_pairs[j][o] = Pair16(s[j] & 63);
        t->min_pairs[j][o] = Pair16(s[j + 4] & 63);
        t->scale_pairs[j + 4][o] = Pair16((s[j + 8] & 0x0F) | ((s[j] >> 6) << 4));
        t->min_pairs[j + 4][o] = Pair16((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
      }
    }
    // Byte l of 32-byte chunk c holds element 64c + l (low nibble) and 64c + 32 + l (high):
    // dword i of the chunk is k = 16c + i (low) and 16c + 8 + i (high).
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < 4; ++c) {
        __m256i v[8];
        rows.Transposed(h, 16 + 32 * c, v);
        for (int i = 0; i < 8; ++i) {
          t->levels[16 * c + i][h] = _mm256_and_si256(v[i], nibble);
          t->levels[16 * c + 8 + i][h] = _mm256_and_si256(_mm256_srli_epi16(v[i], 4), nibble);
        }
      }
    }
  }

  template <int R>
  static void Accumulate(const Tile& t, const ActBlock* a, int64_t nb, __m256 acc[R][2]) {
    __m256i total[R][2];
    for (int r = 0; r < R; ++r) total[r][0] = total[r][1] = _mm256_setzero_si256();
    // One half (8 weight rows) at a time: R int16 pair sums, one weight ymm and the broadcast
    // stay in registers (both halves at once spilled to the stack at R = 2).
    for (int h = 0; h < 2; ++h) {
      for (int s = 0; s < 8; ++s) {
        __m256i pairs[R];
        for (int r = 0; r < R; ++r) pairs[r] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
          const __m256i wk = t.levels[8 * s + k][h];
#pragma GCC unroll 4
          for (int r = 0; r < R; ++r)
            pairs[r] = _mm256_add_epi16(
                pairs[r], _mm256_maddubs_epi16(wk, Broadcast4(a[r * nb + s].q + 4 * k)));
        }
        const __m256i sc =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(t.scale_pairs[s] + 8 * h));
        for (int r = 0; r < R; ++r)
          total[r][h] = _mm256_add_epi32(total[r][h], _mm256_madd_epi16(pairs[r], sc));
      }
    }
    for (int r = 0; r < R; ++r) {
      const ActBlock* ar = a + r * nb;
      const __m256 dx = _mm256_set1_ps(ar->d);
      for (int h = 0; h < 2; ++h) {
        // The mins against the activations' 16-element half sums, (mn, mn) x (sum0, sum1).
        __m256i mins = _mm256_setzero_si256();
        for (int j = 0; j < 8; ++j)
          mins = _mm256_add_epi32(
              mins, _mm256_madd_epi16(
                        _mm256_load_si256(reinterpret_cast<const __m256i*>(t.min_pairs[j] + 8 * h)),
                        Broadcast4(ar[j].sum)));
        const __m256 d = _mm256_mul_ps(_mm256_load_ps(t.d + 8 * h), dx);
        const __m256 dmin = _mm256_mul_ps(_mm256_load_ps(t.dmin + 8 * h), dx);
        acc[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(total[r][h]), d, acc[r][h]);
        acc[r][h] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(mins), dmin, acc[r][h]);
      }
    }
  }
};

struct FormatQ6_K {
  static constexpr int64_t kBlockBytes = 210;
  struct Tile {
    __m256i levels[64][2];  // 0..63; the -32 offset is in offset_pairs
    alignas(32) int32_t scale_pairs[16][kTileRows];
    // (-32 * sc[2g], -32 * sc[2g + 1]) against the half sums (sum[0], sum[1]) of block g.
    alignas(32) int32_t offset_pairs[8][kTileRows];
    alignas(32) float d[kTileRows];
  };

  static void Decode(const TileRows& rows, Tile* t) {
    for (int o = 0; o < kTileRows; ++o) {
      if (o >= rows.valid) {
        t->d[o] = 0.0f;
        for (int s = 0; s < 16; ++s) t->scale_pairs[s][o] = 0;
        for (int g = 0; g < 8; ++g) t->offset_pairs[g][o] = 0;
        continue;
      }
      const uint8_t* blk = rows.base + o * rows.row_bytes;
      const auto* sc = reinterpret_cast<const int8_t*>(blk + 192);
      t->d[o] = HalfToFloat(blk + 208);
      for (int s = 0; s < 16; ++s) t->scale_pairs[s][o] = Pair16(sc[s]);
      for (int g = 0; g < 8; ++g) {
        const uint32_t lo = static_cast<uint16_t>(static_cast<int16_t>(-32 * sc[2 * g]));
        const uint32_t hi = static_cast<uint16_t>(static_cast<int16_t>(-32 * sc[2 * g + 1]));
        t->offset_pairs[g][o] = static_cast<int32_t>(lo | hi << 16);
      }
    }
    // Half q (elements 128q..128q+127): ql bytes 64q + l and 64q + 32 + l (l < 32) hold the low
    // 4 bits of elements 128q + l, + 64 + l (high nibble) and 128q + 32 + l, + 96 + l; qh byte
    // 32q + l their top 2 bits at bit pairs 0, 2 (low nibbles) and 4, 6. In dwords i < 8:
    // k = 32q + i, 32q + 8 + i, 32q + 16 + i, 32q + 24 + i.
    const __m256i nibble = _mm256_set1_epi8(0x0F), top = _mm256_set1_epi8(0x30);
    for (int h = 0; h < 2; ++h) {
      for (int q = 0; q < 2; ++q) {
        __m256i la[8], lb[8], hb[8];
        rows.Transposed(h, 64 * q, la);
        rows.Transposed(h, 64 * q + 32, lb);
        rows.Transposed(h, 128 + 32 * q, hb);
        for (int i = 0; i < 8; ++i) {
          // Bit pair m of each qh byte to bits 4-5 (16-bit shifts: what crosses a byte
          // boundary lands outside the 0x30 mask).
          const __m256i t0 = _mm256_and_si256(_mm256_slli_epi16(hb[i], 4), top);
          const __m256i t1 = _mm256_and_si256(_mm256_slli_epi16(hb[i], 2), top);
          const __m256i t2 = _mm256_and_si256(hb[i], top);
          const __m256i t3 = _mm256_and_si256(_mm256_srli_epi16(hb[i], 2), top);
          t->levels[32 * q + i][h] = _mm256_or_si256(_mm256_and_si256(la[i], nibble), t0);
          t->levels[32 * q + 8 + i][h] = _mm256_or_si256(_mm256_and_si256(lb[i], nibble), t1);
          t->levels[32 * q + 16 + i][h] =
              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(la[i], 4), nibble), t2);
          t->levels[32 * q + 24 + i][h] =
              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lb[i], 4), nibble), t3);
        }
      }
    }
  }

  template <int R>
  static void Accumulate(const Tile& t, const ActBlock* a, int64_t nb, __m256 acc[R][2]) {
    __m256i total[R][2];
    for (int r = 0; r < R; ++r) total[r][0] = total[r][1] = _mm256_setzero_si256();
    // Sub-block s (16 elements, one scale) is k = 4s..4s+3, two int16 sums of two steps each.
    for (int s = 0; s < 16; ++s) {
      const __m256i sc0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.scale_pairs[s]));
      const __m256i sc1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.scale_pairs[s] + 8));
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {
        const int k = 4 * s + 2 * half;
        const __m256i w00 = t.levels[k][0], w01 = t.levels[k][1];
        const __m256i w10 = t.levels[k + 1][0], w11 = t.levels[k + 1][1];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const int8_t* q = a[r * nb + s / 2].q + 16 * (s % 2) + 8 * half;
          const __m256i x0 = Broadcast4(q), x1 = Broadcast4(q + 4);
          const __m256i p0 =
              _mm256_add_epi16(_mm256_maddubs_epi16(w00, x0), _mm256_maddubs_epi16(w10, x1));
          const __m256i p1 =
              _mm256_add_epi16(_mm256_maddubs_epi16(w01, x0), _mm256_maddubs_epi16(w11, x1));
          total[r][0] = _mm256_add_epi32(total[r][0], _mm256_madd_epi16(p0, sc0));
          total[r][1] = _mm256_add_epi32(total[r][1], _mm256_madd_epi16(p1, sc1));
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      const ActBlock* ar = a + r * nb;
      const __m256 dx = _mm256_set1_ps(ar->d);
      for (int h = 0; h < 2; ++h) {
        __m256i offset = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g)
          offset = _mm256_add_epi32(
              offset,
              _mm256_madd_epi16(
                  _mm256_load_si256(reinterpret_cast<const __m256i*>(t.offset_pairs[g] + 8 * h)),
                  Broadcast4(ar[g].sum)));
        const __m256 scale = _mm256_mul_ps(_mm256_load_ps(t.d + 8 * h), dx);
        acc[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(total[r][h], offset)),
                                    scale, acc[r][h]);
      }
    }
  }
};

// R activation rows from row r0 against one decoded super-block, their running sums in
// sums[r][0..16).
template <typename Format, int R>
void RowGroup(const typename Format::Tile& t, const ActBlock* x, int64_t nb, float* sums) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) {
    acc[r][0] = _mm256_loadu_ps(sums + r * kTileRows);
    acc[r][1] = _mm256_loadu_ps(sums + r * kTileRows + 8);
  }
  Format::template Accumulate<R>(t, x, nb, acc);
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(sums + r * kTileRows, acc[r][0]);
    _mm256_storeu_ps(sums + r * kTileRows + 8, acc[r][1]);
  }
}

// Every weight tile of rows [o_begin, o_end), one super-block at a time: the decoded super-block
// (5 KiB) stays in L1 while every activation row meets it, the rows' running sums in a buffer
// of n_rows x 16 floats.
template <typename Format>
void QuantGemm(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes, int64_t in,
               int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const int64_t nb = in / kActBlockSize;
  const int64_t n_units = nb / 8;
  thread_local std::vector<float> sums;
  sums.resize(static_cast<size_t>(n_rows * kTileRows));
  typename Format::Tile tile;
  for (int64_t o0 = o_begin; o0 < o_end; o0 += kTileRows) {
    const int valid = static_cast<int>(std::min<int64_t>(kTileRows, o_end - o0));
    const int next_rows = static_cast<int>(std::min<int64_t>(kTileRows, o_end - o0 - kTileRows));
    std::fill(sums.begin(), sums.end(), 0.0f);
    for (int64_t u = 0; u < n_units; ++u) {
      // The tile's 16 rows are 16 streams, more than the hardware prefetcher follows: the next
      // tile's super-block u is requested into L2 while this one decodes.
      for (int o = 0; o < next_rows; ++o) {
        const uint8_t* unit = wb + (o0 + kTileRows + o) * w_row_bytes + u * Format::kBlockBytes;
        for (int64_t at = 0; at < Format::kBlockBytes; at += 64)
          _mm_prefetch(reinterpret_cast<const char*>(unit + at), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(unit + Format::kBlockBytes - 1), _MM_HINT_T1);
      }
      const TileRows rows{wb + o0 * w_row_bytes + u * Format::kBlockBytes, w_row_bytes, valid};
      Format::Decode(rows, &tile);
      const ActBlock* xu = x + 8 * u;
      int64_t r = 0;
      for (; r + kGroupRows <= n_rows; r += kGroupRows)
        RowGroup<Format, kGroupRows>(tile, xu + r * nb, nb, sums.data() + r * kTileRows);
      for (; r < n_rows; ++r)
        RowGroup<Format, 1>(tile, xu + r * nb, nb, sums.data() + r * kTileRows);
    }
    for (int64_t r = 0; r < n_rows; ++r)
      std::copy(sums.data() + r * kTileRows, sums.data() + r * kTileRows + valid,
                y + r * y_stride + o0);
  }
}

}  // namespace

void QuantGemmQ4_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                   int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  QuantGemm<FormatQ4_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void QuantGemmQ6_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                   int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  QuantGemm<FormatQ6_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

}  // namespace clover::kernels::avx2
