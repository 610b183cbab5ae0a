// The ISA-independent half of the many-row quantized products (quant_gemm_<isa>.cc): a tile of
// 16 weight rows of Q8_0 / Q4_K / Q6_K decoded once into `Tile`s that every activation row then
// meets. Textually included inside the ISA's namespace (no include guard, like
// quant_matmul-inl.h) by files compiled with at least AVX-512 F/BW/VL/DQ.
//
// A decoded unit holds levels in the layout [k/4][16 rows][4 bytes]: levels[k] is one zmm whose
// dword lane o has elements 4k..4k+3 of weight row o. That is the operand vpdpbusd multiplies
// against 4 broadcast activation bytes, and also the VNNI layout of an AMX B tile (a run of
// levels[] of 64-byte rows is a tile with one weight row per column).

namespace {

// Weight rows per tile: one per int32 lane.
constexpr int kTileRows = 16;

inline int32_t LoadI32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// 4 activation bytes (or the two int16 half sums) in every lane: an embedded broadcast.
inline __m512i Broadcast4(const void* p) { return _mm512_set1_epi32(LoadI32(p)); }

// In place: r[c] becomes column c of the 16x16 dword matrix whose row o was r[o].
inline void Transpose16x16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // Each 128-bit lane l of r[4i + j] now holds rows 4i..4i+3 of column 4l + j.
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  // Column 4l + j gathers lane l of r[j], r[4 + j], r[8 + j], r[12 + j].
  for (int j = 0; j < 4; ++j) {
    const __m512i a = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x44);
    const __m512i b = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xEE);
    const __m512i c = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x44);
    const __m512i d = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xEE);
    t[j] = _mm512_shuffle_i32x4(a, c, 0x88);
    t[4 + j] = _mm512_shuffle_i32x4(a, c, 0xDD);
    t[8 + j] = _mm512_shuffle_i32x4(b, d, 0x88);
    t[12 + j] = _mm512_shuffle_i32x4(b, d, 0xDD);
  }
  for (int c = 0; c < 16; ++c) r[c] = t[c];
}

// The rows of one tile: row o's bytes of the current block start at `base + o * row_bytes`;
// rows from `valid` on (past the matrix's end) read as zero.
struct TileRows {
  const uint8_t* base;
  int64_t row_bytes;
  int valid;

  // Dword `offset` of every row's block, one per lane.
  __m512i Gather(int64_t offset) const {
    const __m512i index =
        _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                           _mm512_set1_epi32(static_cast<int32_t>(row_bytes)));
    return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), ValidMask(), index, base + offset,
                                       1);
  }

  // The 16 dwords at `offset` of every row, transposed: out[i] = dword i of each row.
  void Transposed(int64_t offset, __m512i out[16]) const {
    for (int o = 0; o < kTileRows; ++o)
      out[o] =
          o < valid ? _mm512_loadu_si512(base + o * row_bytes + offset) : _mm512_setzero_si512();
    Transpose16x16(out);
  }

  // The 4 dwords at `offset` of every row, transposed: out[j] = dword j of each row. For block
  // headers and scales, where Transposed would read and shuffle 16 dwords to use 4 (and a
  // masked 16-dword read of them was what four Gathers give, 3-5 % faster for Q6_K): rows go
  // four to a zmm (one per 128-bit lane), a permute transposes each zmm's 4x4 dwords, and lane
  // shuffles collect lane j. Q6_K at 16-32 rows: 1.02-1.1x again (BM_QuantGemm), Q4_K unchanged.
  void Transposed4(int64_t offset, __m512i out[4]) const {
    const __m512i transpose4x4 =
        _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    __m512i quad[4];
    for (int q = 0; q < 4; ++q) {
      __m512i v = _mm512_setzero_si512();
      for (int i = 0; i < 4; ++i) {
        const int o = 4 * q + i;
        if (o >= valid) break;
        const __m128i row =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + o * row_bytes + offset));
        v = _mm512_mask_broadcast_i32x4(v, static_cast<__mmask16>(0xF << (4 * i)), row);
      }
      // Lane j of quad[q] now holds dword j of rows 4q..4q+3.
      quad[q] = _mm512_permutexvar_epi32(transpose4x4, v);
    }
    // out[j] = lane j of quad[0], quad[1], quad[2], quad[3].
    out[0] = LaneOfEachQuad<0>(quad);
    out[1] = LaneOfEachQuad<1>(quad);
    out[2] = LaneOfEachQuad<2>(quad);
    out[3] = LaneOfEachQuad<3>(quad);
  }

  // Lane j of each of the four quads.
  template <int j>
  static __m512i LaneOfEachQuad(const __m512i quad[4]) {
    constexpr int kLaneJ = j | j << 2 | j << 4 | j << 6;
    const __m512i a = _mm512_shuffle_i32x4(quad[0], quad[1], kLaneJ);  // q0.j q0.j q1.j q1.j
    const __m512i b = _mm512_shuffle_i32x4(quad[2], quad[3], kLaneJ);  // q2.j q2.j q3.j q3.j
    return _mm512_shuffle_i32x4(a, b, 0 | 2 << 2 | 0 << 4 | 2 << 6);
  }

  // Like Transposed, for two 32-byte runs: out[0..8) from `offset0`, out[8..16) from `offset1`.
  void TransposedPair(int64_t offset0, int64_t offset1, __m512i out[16]) const {
    for (int o = 0; o < kTileRows; ++o) {
      if (o >= valid) {
        out[o] = _mm512_setzero_si512();
        continue;
      }
      const uint8_t* row = base + o * row_bytes;
      const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + offset0));
      const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + offset1));
      out[o] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
    Transpose16x16(out);
  }

  __mmask16 ValidMask() const { return static_cast<__mmask16>((1u << valid) - 1); }
};

// f16 in the low half of each dword to f32.
inline __m512 HalfToFloat(__m512i v) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v)); }

// Each format: `Tile` (one decoded unit of 16 weight rows), `Units(nb)` (units per row of nb
// activation blocks) and `Decode(rows, nb, unit, tile)`.

// Q8_0: the unit is up to 8 blocks of 32, each with its own f16 scale. The s8 levels are stored
// as u8 (w + 128, what vpdpbusd multiplies), and 128 * sum(x) comes off with the ActBlock sums.
struct FormatQ8_0 {
  static constexpr int64_t kBlockBytes = 34;
  static constexpr int kUnitBlocks = 8;
  struct Tile {
    __m512i levels[kUnitBlocks][8];
    __m512 d[kUnitBlocks];
    int n_blocks;
  };

  static int64_t Units(int64_t nb) { return (nb + kUnitBlocks - 1) / kUnitBlocks; }

  static void Decode(TileRows rows, int64_t nb, int64_t unit, Tile* t) {
    const int64_t b0 = unit * kUnitBlocks;
    t->n_blocks = static_cast<int>(std::min<int64_t>(kUnitBlocks, nb - b0));
    rows.base += b0 * kBlockBytes;
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
    for (int b = 0; b < t->n_blocks; b += 2) {
      // An odd last block pairs with itself; its second copy is not read.
      const int b1 = std::min(b + 1, t->n_blocks - 1);
      __m512i v[16];
      rows.TransposedPair(b * kBlockBytes + 2, b1 * kBlockBytes + 2, v);
      for (int k = 0; k < 8; ++k) {
        t->levels[b][k] = _mm512_xor_si512(v[k], bias);
        t->levels[b1][k] = _mm512_xor_si512(v[8 + k], bias);
      }
    }
    for (int b = 0; b < t->n_blocks; ++b) t->d[b] = HalfToFloat(rows.Gather(b * kBlockBytes));
  }
};

struct FormatQ4_K {
  static constexpr int64_t kBlockBytes = 144;
  struct Tile {
    __m512i levels[64];
    __m512 scales[8];
    __m512i min_pairs[8];  // (mn, mn) as int16 pairs: one vpdpwssd with (sum[0], sum[1])
    __m512 d, dmin;
  };

  static int64_t Units(int64_t nb) { return nb / 8; }

  static void Decode(TileRows rows, int64_t /*nb*/, int64_t unit, Tile* t) {
    rows.base += unit * kBlockBytes;
    // Dword 0: the f16 d and dmin; dwords 1-3: the 12 scale bytes (6-bit scales and mins of
    // the 8 sub-blocks), 4 per dword.
    __m512i head[4];
    rows.Transposed4(0, head);
    const __m512i header = head[0];
    t->d = HalfToFloat(header);
    t->dmin = HalfToFloat(_mm512_srli_epi32(header, 16));
    const __m512i s0 = head[1], s1 = head[2], s2 = head[3];
    const __m512i low6 = _mm512_set1_epi32(63), low4 = _mm512_set1_epi32(15),
                  low2 = _mm512_set1_epi32(3);
    for (int j = 0; j < 4; ++j) {
      const __m512i b0 = _mm512_srli_epi32(s0, 8 * j), b1 = _mm512_srli_epi32(s1, 8 * j),
                    b2 = _mm512_srli_epi32(s2, 8 * j);
      const __m512i top_sc = _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(b0, 6), low2), 4);
      const __m512i top_mn = _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(b1, 6), low2), 4);
      const __m512i mn_lo = _mm512_and_si512(b1, low6);
      const __m512i mn_hi =
          _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(b2, 4), low4), top_mn);
      t->scales[j] = _mm512_cvtepi32_ps(_mm512_and_si512(b0, low6));
      t->scales[j + 4] = _mm512_cvtepi32_ps(_mm512_or_si512(_mm512_and_si512(b2, low4), top_sc));
      t->min_pairs[j] = _mm512_or_si512(mn_lo, _mm512_slli_epi32(mn_lo, 16));
      t->min_pairs[j + 4] = _mm512_or_si512(mn_hi, _mm512_slli_epi32(mn_hi, 16));
    }
    // Byte l of 32-byte chunk c holds element 64c + l (low nibble) and 64c + 32 + l (high).
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    for (int half = 0; half < 2; ++half) {
      __m512i v[16];
      rows.Transposed(16 + 64 * half, v);
      for (int i = 0; i < 16; ++i) {
        const int c = 2 * half + i / 8, k = 16 * c + i % 8;
        t->levels[k] = _mm512_and_si512(v[i], nibble);
        t->levels[k + 8] = _mm512_and_si512(_mm512_srli_epi16(v[i], 4), nibble);
      }
    }
  }
};

struct FormatQ6_K {
  static constexpr int64_t kBlockBytes = 210;
  struct Tile {
    __m512i levels[64];       // unsigned 0..63; the -32 offset is in offset_pairs
    __m512 scales[16];        // one per 16 elements
    __m512i offset_pairs[8];  // (-32 * sc[2g], -32 * sc[2g + 1]) against (sum[0], sum[1])
    __m512 d;
  };

  static int64_t Units(int64_t nb) { return nb / 8; }

  static void Decode(TileRows rows, int64_t /*nb*/, int64_t unit, Tile* t) {
    rows.base += unit * kBlockBytes;
    // The 16 int8 scales are bytes 192..207, 4 to a dword; d is the f16 at 208, the high half
    // of the dword at 206 (the block ends at 210).
    __m512i packed_scales[4];
    rows.Transposed4(192, packed_scales);
    t->d = HalfToFloat(_mm512_srli_epi32(rows.Gather(206), 16));
    __m512i scales[16];
    for (int s = 0; s < 16; ++s)
      scales[s] = _mm512_srai_epi32(_mm512_slli_epi32(packed_scales[s / 4], 24 - 8 * (s % 4)), 24);
    for (int s = 0; s < 16; ++s) t->scales[s] = _mm512_cvtepi32_ps(scales[s]);
    const __m512i minus32 = _mm512_set1_epi32(-32), low16 = _mm512_set1_epi32(0xFFFF);
    for (int g = 0; g < 8; ++g) {
      const __m512i lo = _mm512_mullo_epi32(scales[2 * g], minus32);
      const __m512i hi = _mm512_mullo_epi32(scales[2 * g + 1], minus32);
      t->offset_pairs[g] = _mm512_or_si512(_mm512_and_si512(lo, low16), _mm512_slli_epi32(hi, 16));
    }
    // Half h: ql byte 64h + l (l < 32) has elements 128h + l (low nibble) and 128h + 64 + l
    // (high); ql byte 64h + 32 + l has 128h + 32 + l and 128h + 96 + l; qh byte 32h + l has
    // bits 4-5 of those four at bit pairs 0, 2, 4, 6. In dwords (k = element / 4, i < 16):
    // ql dword 16h + i -> k = 32h + i (low), 32h + 16 + i (high).
    __m512i qh[16];
    rows.Transposed(128, qh);
    // A level is (nibble & 0x0F) | top, top = its qh bit pair moved to bits 4-5 of the byte (a
    // 16-bit shift then the byte mask 0x30; bits crossing between bytes land outside it):
    // `vpternlogd` 0xEA computes (a & b) | c.
    const __m512i nibble = _mm512_set1_epi8(0x0F), top_bits = _mm512_set1_epi8(0x30);
    const auto top = [&](__m512i bits, int pair) {
      const int shift = 4 - 2 * pair;  // bit pair `pair` to bits 4-5
      const __m512i moved = shift > 0   ? _mm512_slli_epi16(bits, shift)
                            : shift < 0 ? _mm512_srli_epi16(bits, -shift)
                                        : bits;
      return _mm512_and_si512(moved, top_bits);
    };
    for (int h = 0; h < 2; ++h) {
      __m512i ql[16];
      rows.Transposed(64 * h, ql);
      for (int i = 0; i < 16; ++i) {
        // k = 32h + 8m + i % 8 takes qh bits 2m; m = i / 8 (low nibble) or 2 + i / 8 (high).
        const __m512i bits = qh[8 * h + i % 8];
        const int m = i / 8;
        t->levels[32 * h + i] = _mm512_ternarylogic_epi32(nibble, ql[i], top(bits, m), 0xEA);
        t->levels[32 * h + 16 + i] =
            _mm512_ternarylogic_epi32(nibble, _mm512_srli_epi16(ql[i], 4), top(bits, m + 2), 0xEA);
      }
    }
  }
};

// Decodes each 16-row tile of weight rows [o_begin, o_end) once, then calls
// fn(tiles, n_units, o0, rows): the tile's units and its first row o0 (`rows.valid` of them).
template <typename Format, typename Fn>
void ForEachWeightTile(const void* w, int64_t w_row_bytes, int64_t in, int64_t o_begin,
                       int64_t o_end, const Fn& fn) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const int64_t nb = in / kActBlockSize;
  const int64_t n_units = Format::Units(nb);
  // The decoded tile: 16 rows x `in` levels plus scales (80 KiB at in = 4096, Q4_K), read from
  // L1/L2 by every row group. Reused across calls.
  thread_local std::vector<typename Format::Tile> tiles;
  tiles.resize(static_cast<size_t>(n_units));
  // The tile's 16 rows are 16 streams a unit apart, more than the hardware prefetcher follows
  // ahead: while unit u of a tile decodes, unit u of the next tile's rows is requested into L2.
  const int64_t unit_bytes = w_row_bytes / n_units;
  for (int64_t o0 = o_begin; o0 < o_end; o0 += kTileRows) {
    const TileRows rows{wb + o0 * w_row_bytes, w_row_bytes,
                        static_cast<int>(std::min<int64_t>(kTileRows, o_end - o0))};
    const int64_t next_rows = std::min<int64_t>(kTileRows, o_end - o0 - kTileRows);
    for (int64_t u = 0; u < n_units; ++u) {
      for (int64_t o = 0; o < next_rows; ++o) {
        const uint8_t* unit = rows.base + (kTileRows + o) * w_row_bytes + u * unit_bytes;
        for (int64_t at = 0; at < unit_bytes; at += 64)
          _mm_prefetch(reinterpret_cast<const char*>(unit + at), _MM_HINT_T2);
        _mm_prefetch(reinterpret_cast<const char*>(unit + unit_bytes - 1), _MM_HINT_T2);
      }
      Format::Decode(rows, nb, u, &tiles[u]);
    }
    fn(tiles.data(), n_units, o0, rows);
  }
}

}  // namespace
