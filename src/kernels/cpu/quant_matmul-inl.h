// The ISA-independent half of the quantized matmuls: 8-bit activation blocks (ActBlock) against
// Q8_0 / Q4_K / Q6_K weight rows with 32-byte integer dot products. Textually included by
// quant_matmul_<isa>.cc inside its ISA namespace (no include guard, like matmul_tiling-inl.h),
// after the file defines `DotU8S8(u, s)`: the 8 int32 sums of 4 adjacent u8 x s8 products
// (lane k covers bytes 4k..4k+3).
//
// Per 32-element block b of a weight row: y += dw_b * dx_b * (integer dot of the levels), so only
// the 32-lane integer work is vectorized and the scales meet the sum once per block. The
// unsigned formats subtract their offset with the activation sums ActBlock::sum instead of
// widening the levels.

namespace {

inline float LoadHalf(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

inline __m256i Load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

inline float SumLanes(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// Copies the ActBlock::sum pairs of `blocks` consecutive blocks back to back into `out` (2 int16
// per block), so that one 256-bit load holds a super-block's 16 half sums.
inline void PackHalfSums(const ActBlock* x, int64_t blocks, int16_t* out) {
  for (int64_t b = 0; b < blocks; ++b) {
    out[2 * b] = x[b].sum[0];
    out[2 * b + 1] = x[b].sum[1];
  }
}

// Each format: `Rows<R>(x, half_sums, nb, w, out)` dots one weight row `w` with the R activation
// rows at x, x + nb, ... (nb = blocks per row) into out[0..R); half_sums holds each row's
// ActBlock::sum pairs back to back (2 * nb int16 a row, PackHalfSums), packed by the driver only
// for formats with `kReadsHalfSums`.
struct FormatQ8_0 {
  static constexpr int64_t kBlockBytes = 34;
  static constexpr bool kReadsHalfSums = false;

  template <int R>
  static void Rows(const ActBlock* x, const int16_t* /*half_sums*/, int64_t nb, const uint8_t* w,
                   float* out) {
    if constexpr (R == 1) {
      out[0] = OneRow(x, nb, w);
      return;
    }
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = w + b * kBlockBytes;
      const float dw = LoadHalf(blk);
      const __m256i wq = Load256(blk + 2);
      // |w| (as u8, so -128 becomes 128) times x with w's sign: the signed product in u8 x s8.
      const __m256i wabs = _mm256_sign_epi8(wq, wq);
      for (int r = 0; r < R; ++r) {
        const ActBlock& a = x[r * nb + b];
        const __m256i xs = _mm256_sign_epi8(Load256(a.q), wq);
        acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * a.d), _mm256_cvtepi32_ps(DotU8S8(wabs, xs)),
                                 acc[r]);
      }
    }
    for (int r = 0; r < R; ++r) out[r] = SumLanes(acc[r]);
  }

  // One activation row (decode): consecutive blocks go to four accumulators. With one, each
  // block would wait for the previous block's FMA (4-cycle latency per 34 weight bytes), which
  // caps the product below the memory's rate; several rows are several chains already.
  static float OneRow(const ActBlock* x, int64_t nb, const uint8_t* w) {
    auto add_block = [x, w](int64_t b, __m256 acc) {
      const uint8_t* blk = w + b * kBlockBytes;
      const __m256i wq = Load256(blk + 2);
      const __m256i xs = _mm256_sign_epi8(Load256(x[b].q), wq);
      const __m256 dot = _mm256_cvtepi32_ps(DotU8S8(_mm256_sign_epi8(wq, wq), xs));
      return _mm256_fmadd_ps(_mm256_set1_ps(LoadHalf(blk) * x[b].d), dot, acc);
    };
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t b = 0;
    for (; b + 4 <= nb; b += 4) {
      a0 = add_block(b, a0);
      a1 = add_block(b + 1, a1);
      a2 = add_block(b + 2, a2);
      a3 = add_block(b + 3, a3);
    }
    for (; b < nb; ++b) a0 = add_block(b, a0);
    return SumLanes(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  }
};

// The K formats: MatMul gives the 8 activation blocks of a super-block one shared scale
// (QuantizeActivations with scale_block 256), so the sub-blocks' integer dots, times their
// integer scales, add up in int32 and meet the float scales once per 256 weights. The products
// are `vpmaddubsw` (u8 levels x s8 activations, pairs to int16) then `vpmaddwd` by the sub-block
// scale (int16 pairs to int32): no int32 multiply. The Q4_K mins and the Q6_K -32 offsets are
// one `vpmaddwd` of the 16 scales (or mins, doubled) against the row's 16 half sums, which the
// driver packs once per call (`half_sums`, 2 per block), instead of scalar code per weight row.
// Bounds: Q4_K |pair| <= 2 * 15 * 127, x 63 x 2, x 8 sub-blocks < 2^23; Q6_K 2 * 63 * 127, x 127
// x 2, x 8 groups < 2^26; the offset 127 * 16 * 127 x 16 < 2^22, x 32 < 2^27.

// Byte indices (2j, 2j + 1) in every int16 lane: `vpshufb` of 8 int16 values in each 128-bit
// lane then broadcasts value j (lane 0) and value j_hi (lane 1).
inline __m256i PickInt16(int j, int j_hi) {
  return _mm256_setr_m128i(_mm_set1_epi16(static_cast<int16_t>(2 * j | (2 * j + 1) << 8)),
                           _mm_set1_epi16(static_cast<int16_t>(2 * j_hi | (2 * j_hi + 1) << 8)));
}

struct FormatQ4_K {
  static constexpr int64_t kBlockBytes = 144;
  static constexpr bool kReadsHalfSums = true;

  template <int R>
  static void Rows(const ActBlock* x, const int16_t* half_sums, int64_t nb, const uint8_t* w,
                   float* out) {
    __m256 acc[R], min_acc[R];
    for (int r = 0; r < R; ++r) acc[r] = min_acc[r] = _mm256_setzero_ps();
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int64_t sb = 0; sb < nb / 8; ++sb) {
      const uint8_t* blk = w + sb * kBlockBytes;
      const float d = LoadHalf(blk);
      const float dmin = LoadHalf(blk + 2);
      // The 6-bit scales and mins of the 8 sub-blocks (ref/dequantize.cc's 12-byte layout),
      // four at a time in 32-bit words: sub-blocks 4-7 keep their top 2 bits in bytes 0-7.
      uint32_t u[3];
      std::memcpy(u, blk + 4, 12);
      const uint32_t sc_lo = u[0] & 0x3F3F3F3Fu;
      const uint32_t mn_lo = u[1] & 0x3F3F3F3Fu;
      const uint32_t sc_hi = (u[2] & 0x0F0F0F0Fu) | (((u[0] >> 6) & 0x03030303u) << 4);
      const uint32_t mn_hi = ((u[2] >> 4) & 0x0F0F0F0Fu) | (((u[1] >> 6) & 0x03030303u) << 4);
      const __m128i sc16 =
          _mm_cvtepu8_epi16(_mm_setr_epi32(static_cast<int>(sc_lo), static_cast<int>(sc_hi), 0, 0));
      const __m128i mn16 =
          _mm_cvtepu8_epi16(_mm_setr_epi32(static_cast<int>(mn_lo), static_cast<int>(mn_hi), 0, 0));
      // (mn_j, mn_j) against block j's half sums (sum[0], sum[1]).
      const __m256i mn_pairs =
          _mm256_setr_m128i(_mm_unpacklo_epi16(mn16, mn16), _mm_unpackhi_epi16(mn16, mn16));
      const __m256i sc_both = _mm256_broadcastsi128_si256(sc16);
      __m256i lv[8], scale[8];
      for (int c = 0; c < 4; ++c) {
        const __m256i raw = Load256(blk + 16 + 32 * c);
        lv[2 * c] = _mm256_and_si256(raw, low4);
        lv[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
      }
      for (int j = 0; j < 8; ++j) scale[j] = _mm256_shuffle_epi8(sc_both, PickInt16(j, j));
      for (int r = 0; r < R; ++r) {
        const ActBlock* a = x + r * nb + 8 * sb;
        __m256i isum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        for (int j = 0; j < 8; ++j)
          isum[j % 2] = _mm256_add_epi32(
              isum[j % 2],
              _mm256_madd_epi16(_mm256_maddubs_epi16(lv[j], Load256(a[j].q)), scale[j]));
        const float dx = a->d;
        acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * dx),
                                 _mm256_cvtepi32_ps(_mm256_add_epi32(isum[0], isum[1])), acc[r]);
        const __m256i mins =
            _mm256_madd_epi16(mn_pairs, Load256(half_sums + (r * nb + 8 * sb) * 2));
        min_acc[r] =
            _mm256_fmadd_ps(_mm256_set1_ps(dmin * dx), _mm256_cvtepi32_ps(mins), min_acc[r]);
      }
    }
    for (int r = 0; r < R; ++r) out[r] = SumLanes(_mm256_sub_ps(acc[r], min_acc[r]));
  }
};

struct FormatQ6_K {
  static constexpr int64_t kBlockBytes = 210;
  static constexpr bool kReadsHalfSums = true;

  template <int R>
  static void Rows(const ActBlock* x, const int16_t* half_sums, int64_t nb, const uint8_t* w,
                   float* out) {
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i low2 = _mm256_set1_epi8(0x03);
    for (int64_t sb = 0; sb < nb / 8; ++sb) {
      const uint8_t* blk = w + sb * kBlockBytes;
      const float d = LoadHalf(blk + 208);
      // The eight 32-element groups: 4 low bits from ql, 2 high bits from qh.
      __m256i v[8];
      for (int h = 0; h < 2; ++h) {
        const __m256i ql0 = Load256(blk + 64 * h);
        const __m256i ql1 = Load256(blk + 64 * h + 32);
        const __m256i qh = Load256(blk + 128 + 32 * h);
        v[4 * h] = _mm256_or_si256(_mm256_and_si256(ql0, low4),
                                   _mm256_slli_epi16(_mm256_and_si256(qh, low2), 4));
        v[4 * h + 1] =
            _mm256_or_si256(_mm256_and_si256(ql1, low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), low2), 4));
        v[4 * h + 2] =
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), low2), 4));
        v[4 * h + 3] =
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), low2), 4));
      }
      // The 16 int8 scales as int16: all of them (for the offsets), and per group g the pair
      // sc[2g] (its first 16 elements, int16 lanes 0-7) / sc[2g + 1] (lanes 8-15).
      const __m128i sc_bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 192));
      const __m256i sc_all = _mm256_cvtepi8_epi16(sc_bytes);
      const __m256i sc_lo8 = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(sc_bytes));
      const __m256i sc_hi8 =
          _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_srli_si128(sc_bytes, 8)));
      __m256i scale[8];
      for (int g = 0; g < 8; ++g)
        scale[g] =
            _mm256_shuffle_epi8(g < 4 ? sc_lo8 : sc_hi8, PickInt16(2 * (g % 4), 2 * (g % 4) + 1));
      for (int r = 0; r < R; ++r) {
        const ActBlock* a = x + r * nb + 8 * sb;
        __m256i isum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        for (int g = 0; g < 8; ++g)
          isum[g % 2] = _mm256_add_epi32(
              isum[g % 2],
              _mm256_madd_epi16(_mm256_maddubs_epi16(v[g], Load256(a[g].q)), scale[g]));
        // The levels are stored + 32: subtract 32 * sum(scale x activation half sums).
        const __m256i offset =
            _mm256_madd_epi16(sc_all, Load256(half_sums + (r * nb + 8 * sb) * 2));
        const __m256i total =
            _mm256_sub_epi32(_mm256_add_epi32(isum[0], isum[1]), _mm256_slli_epi32(offset, 5));
        acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(total), acc[r]);
      }
    }
    for (int r = 0; r < R; ++r) out[r] = SumLanes(acc[r]);
  }
};

// Activation rows that meet each decoded weight row while it is in registers.
constexpr int kQuantTileRows = 4;
// Weight rows per L2 block, as in matmul_tiling-inl.h.
constexpr int64_t kQuantWeightBlock = 64;

template <typename Format, int R>
inline void RowsUpTo(const ActBlock* x, const int16_t* half_sums, int64_t n_rows, int64_t nb,
                     const uint8_t* w, float* out) {
  if constexpr (R > 1) {
    if (n_rows < R) {
      RowsUpTo<Format, R - 1>(x, half_sums, n_rows, nb, w, out);
      return;
    }
  }
  Format::template Rows<R>(x, half_sums, nb, w, out);
}

// How far ahead of the row being multiplied the weights are requested: at least this many rows
// and this many bytes. With one or two activation rows a kernel decodes faster than the hardware
// prefetcher streams a thread's slice of a matrix; short rows (an expert's down projection, 288
// bytes at Q4_K) need more rows in flight to cover the memory latency. The lines go to L2, not
// L1 (_MM_HINT_T2): an L1 prefetch holds one of the core's ~16 L1 fill buffers for the whole
// memory latency, which capped a core at ~9 GB/s on Sapphire Rapids; into L2 the misses overlap
// in L2's deeper queue (tg32 23 -> 30 tok/s there, docs/benchmarks.md), and the kernel's own
// loads then hit L2.
constexpr int64_t kPrefetchRows = 4;
constexpr int64_t kPrefetchBytes = 4096;

inline void PrefetchRow(const uint8_t* row, int64_t bytes) {
  for (int64_t at = 0; at < bytes; at += 64)
    _mm_prefetch(reinterpret_cast<const char*>(row + at), _MM_HINT_T2);
}

inline int64_t PrefetchDistanceRows(int64_t w_row_bytes) {
  return std::max(kPrefetchRows, (kPrefetchBytes + w_row_bytes - 1) / w_row_bytes);
}

template <typename Format>
void QuantMatMul(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes, int64_t in,
                 int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const int64_t nb = in / kActBlockSize;
  float out[kQuantTileRows];
  const int64_t ahead = PrefetchDistanceRows(w_row_bytes);
  thread_local std::vector<int16_t> half_sums;
  if constexpr (Format::kReadsHalfSums) {
    half_sums.resize(static_cast<size_t>(2 * n_rows * nb));
    PackHalfSums(x, n_rows * nb, half_sums.data());
  }
  for (int64_t ob = o_begin; ob < o_end; ob += kQuantWeightBlock) {
    const int64_t oe = std::min(o_end, ob + kQuantWeightBlock);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kQuantTileRows) {
      const int64_t nr = std::min<int64_t>(kQuantTileRows, n_rows - r0);
      for (int64_t o = ob; o < oe; ++o) {
        // The first tile of a weight block reads it from memory; later tiles find it in L2.
        if (r0 == 0 && o + ahead < o_end) PrefetchRow(wb + (o + ahead) * w_row_bytes, w_row_bytes);
        RowsUpTo<Format, kQuantTileRows>(x + r0 * nb, half_sums.data() + 2 * r0 * nb, nr, nb,
                                         wb + o * w_row_bytes, out);
        for (int64_t r = 0; r < nr; ++r) y[(r0 + r) * y_stride + o] = out[r];
      }
    }
  }
}

}  // namespace

#if defined(__AVX512BW__) && defined(__AVX512VNNI__)
#include "kernels/cpu/quant_matmul_wide-inl.h"
// Up to this many activation rows the quantized formats take the 512-bit kernels.
constexpr int64_t kWideMaxRows = 16;
#define CLOVER_WIDE_KERNELS 1
#endif

void QuantMatMulQ8_0(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                     int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
#ifdef CLOVER_WIDE_KERNELS
  // From two rows on, the 256-bit kernel's per-block scale work is shared by the rows, and it
  // was as fast or faster end to end (docs/benchmarks.md).
  if (n_rows == 1) {
    WideQuantMatMul<WideQ8_0>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
    return;
  }
#endif
  QuantMatMul<FormatQ8_0>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void QuantMatMulQ4_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                     int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
#ifdef CLOVER_WIDE_KERNELS
  if (n_rows <= kWideMaxRows) {
    WideQuantMatMul<WideQ4_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
    return;
  }
#endif
  QuantMatMul<FormatQ4_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void QuantMatMulQ6_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                     int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
#ifdef CLOVER_WIDE_KERNELS
  if (n_rows <= kWideMaxRows) {
    WideQuantMatMul<WideQ6_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
    return;
  }
#endif
  QuantMatMul<FormatQ6_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

#undef CLOVER_WIDE_KERNELS
