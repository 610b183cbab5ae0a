// AMX quantized GEMM for many activation rows: the quant_gemm of the avx512 file with its
// vpdpbusd loops replaced by AMX int8 tile products. One TDPBSSD multiplies 16 activation rows
// (the A tile, repacked per call) by 16 weight rows (the B tile: a run of the decoded levels[] of
// quant_gemm_tiles-inl.h, which is already AMX's VNNI layout) into a 16x16 int32 tile: 16384
// multiply-adds at K = 64, in the time (~16 cycles) vpdpbusd takes for 64 x 16.
//
// A product has to meet its weight scales before it is added to one of another scale, and AMX
// has no tile-to-register move: every tile is stored and read back into f32 FMAs, and that
// post-processing costs more than the product. So the K formats fold their sub-block scales into
// the levels once per decoded tile: sc * q (Q4_K: <= 63 * 15; Q6_K: sc * (q - 32) in
// [-4096, 4064]) is split as hi * 2^shift + lo with hi and lo in s8, and the whole super-block's
// products of hi and of lo add up exactly in two int32 tiles, post-processed once per
// super-block (256 elements) instead of once per sub-block of 32 or 16. Q8_0's f16 scale per
// block of 32 cannot be folded: it keeps a product and a post-processing per block, with the
// products running a pair of blocks ahead of it. The Q4_K mins still come from the ActBlock
// half sums, as in the avx512 kernel.
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/quantize.h"

namespace clover::kernels::amx {

#include "kernels/cpu/quant_gemm_tiles-inl.h"

namespace {

// Activation rows per A tile (and per C tile).
constexpr int kTileActRows = 16;
// Bytes per row of a C tile and of a B tile: 16 int32 lanes, one per weight row.
constexpr int64_t kTileRowBytes = kTileRows * 4;

// The 64-byte operand of LDTILECFG (palette 1).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// Tile registers: C accumulators in tmm0-tmm3, A (activations) in tmm4/tmm5, B (weights) in
// tmm6/tmm7. GCC's tile intrinsics paste the register number into the assembly text, so the
// code below spells them as literals.
constexpr int kCTiles[] = {0, 1, 2, 3}, kATiles[] = {4, 5}, kBTiles[] = {6, 7};

// Configures the tiles for products over `k` bytes (32: one Q8_0 block, 64: a quarter of a
// K-format super-block) for one kernel call, and releases them after it so that the thread's
// context switches stop saving 8 KiB of tile data.
class TileScope {
 public:
  explicit TileScope(int k) {
    TileConfig config;
    for (int c : kCTiles) {
      config.rows[c] = kTileActRows;
      config.colsb[c] = kTileRowBytes;
    }
    for (int a : kATiles) {
      config.rows[a] = kTileActRows;
      config.colsb[a] = static_cast<uint16_t>(k);
    }
    for (int b : kBTiles) {
      config.rows[b] = static_cast<uint8_t>(k / 4);
      config.colsb[b] = kTileRowBytes;
    }
    _tile_loadconfig(&config);
  }
  ~TileScope() { _tile_release(); }
  TileScope(const TileScope&) = delete;
  TileScope& operator=(const TileScope&) = delete;
};

// The activation levels repacked for the A tiles: group g of 16 rows, chunk c of `width` levels
// (32 or 64), row r at ((g * n_chunks + c) * 16 + r) * width, so that one tile is 16 * width
// contiguous aligned bytes. Read in place (rows nb ActBlocks apart, 32 of each 40 bytes, across
// cache lines) the A loads took most of the time. The last group's rows past n_rows are zero.
class PackedActivations {
 public:
  PackedActivations(const ActBlock* x, int64_t n_rows, int64_t nb, int64_t width)
      : width_(width), n_chunks_(nb * kActBlockSize / width) {
    const int64_t n_groups = (n_rows + kTileActRows - 1) / kTileActRows;
    thread_local std::vector<Chunk> storage;  // reused across calls
    storage.resize(static_cast<size_t>(n_groups * nb * kActBlockSize * kTileActRows /
                                       static_cast<int64_t>(sizeof(Chunk))));
    data_ = storage.data()->bytes;
    for (int64_t r = 0; r < n_groups * kTileActRows; ++r)
      for (int64_t b = 0; b < nb; ++b) {
        int8_t* dst = Tile(r / kTileActRows, b * kActBlockSize / width) +
                      (r % kTileActRows) * width + b * kActBlockSize % width;
        if (r < n_rows)
          std::memcpy(dst, x[r * nb + b].q, kActBlockSize);
        else
          std::memset(dst, 0, kActBlockSize);
      }
  }

  // The A tile of chunk c of group g (rows `width` bytes apart).
  const int8_t* Tile(int64_t g, int64_t c) const {
    return data_ + (g * n_chunks_ + c) * TileBytes();
  }

 private:
  struct alignas(64) Chunk {
    int8_t bytes[64];
  };
  int8_t* Tile(int64_t g, int64_t c) { return data_ + (g * n_chunks_ + c) * TileBytes(); }
  int64_t TileBytes() const { return kTileActRows * width_; }

  int64_t width_;
  int64_t n_chunks_;
  int8_t* data_;
};

// The activation sums of each 32-element block, two consecutive blocks per dword (the even
// block in the low 16 bits), row after row: what the Q4_K mins multiply, one vpdpwssd per pair.
class BlockSumPairs {
 public:
  BlockSumPairs(const ActBlock* x, int64_t n_rows, int64_t nb) : pairs_per_row_(nb / 2) {
    thread_local std::vector<uint32_t> storage;  // reused across calls
    storage.resize(static_cast<size_t>(n_rows * pairs_per_row_));
    for (int64_t i = 0; i < n_rows * pairs_per_row_; ++i) {
      const ActBlock* a = x + 2 * i;
      const auto sum = [](const ActBlock& b) { return static_cast<uint16_t>(b.sum[0] + b.sum[1]); };
      storage[i] = sum(a[0]) | static_cast<uint32_t>(sum(a[1])) << 16;
    }
    data_ = storage.data();
  }
  // Row r's pairs from block 2i on.
  const uint32_t* Row(int64_t r, int64_t i) const { return data_ + r * pairs_per_row_ + i; }

 private:
  int64_t pairs_per_row_;
  const uint32_t* data_;
};

// One pass over the decoded tiles: `n_rows` activation rows from group `group` on (at most 16
// per group the format takes at once), into y[r * y_stride + o] for the lanes o of `mask`.
struct RowGroupArgs {
  const PackedActivations* xa;
  const BlockSumPairs* sums;  // Q4_K only
  int64_t group;
  int64_t row;        // the pass's first row
  const ActBlock* x;  // row `row` of the activations
  int64_t nb;
  int n_rows;
  __mmask16 mask;
  float* y;
  int64_t y_stride;
};

// ---- Q8_0: one product per block of 32 ----

// Two blocks' int32 products: c[j][r][o] = block j's levels of activation row r times weight
// row o's.
struct alignas(64) PairProducts {
  int32_t c[2][kTileActRows][kTileRows];
};

// Blocks b0 / b1: activation tiles a0 / a1 times weight tiles w0 / w1 into the C tiles c0 / c1
// (literal register numbers, see kCTiles), and their store into p.
#define CLOVER_AMX_ISSUE_PAIR(c0, c1, a0, a1, a_stride, w0, w1) \
  do {                                                          \
    _tile_zero(c0);                                             \
    _tile_zero(c1);                                             \
    _tile_loadd(4, a0, a_stride);                               \
    _tile_loadd(6, w0, kTileRowBytes);                          \
    _tile_dpbssd(c0, 4, 6);                                     \
    _tile_loadd(5, a1, a_stride);                               \
    _tile_loadd(7, w1, kTileRowBytes);                          \
    _tile_dpbssd(c1, 5, 7);                                     \
  } while (0)
#define CLOVER_AMX_STORE_PAIR(c0, c1, p)        \
  do {                                          \
    _tile_stored(c0, (p)->c[0], kTileRowBytes); \
    _tile_stored(c1, (p)->c[1], kTileRowBytes); \
  } while (0)

// The pair in C tiles 0/1 (kSet 0) or 2/3 (kSet 1).
template <int kSet>
inline void IssuePair(const int8_t* a0, const int8_t* a1, int64_t a_stride, const void* w0,
                      const void* w1) {
  if constexpr (kSet == 0)
    CLOVER_AMX_ISSUE_PAIR(0, 1, a0, a1, a_stride, w0, w1);
  else
    CLOVER_AMX_ISSUE_PAIR(2, 3, a0, a1, a_stride, w0, w1);
}

template <int kSet>
inline void StorePair(PairProducts* p) {
  if constexpr (kSet == 0)
    CLOVER_AMX_STORE_PAIR(0, 1, p);
  else
    CLOVER_AMX_STORE_PAIR(2, 3, p);
}

#undef CLOVER_AMX_ISSUE_PAIR
#undef CLOVER_AMX_STORE_PAIR

struct AmxQ8_0 {
  using Format = FormatQ8_0;
  static constexpr int kChunk = 32;
  static constexpr int kGroupsPerPass = 1;
  static constexpr bool kUsesBlockSums = false;
  struct Prepared {};

  // Back from the decoder's u8 (w + 128) to the s8 levels.
  static void Prepare(Format::Tile* tiles, int64_t n_units, Prepared*) {
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
    for (int64_t u = 0; u < n_units; ++u)
      for (int b = 0; b < tiles[u].n_blocks; ++b)
        for (__m512i& v : tiles[u].levels[b]) v = _mm512_xor_si512(v, bias);
  }

  static void RowGroups(const Format::Tile* tiles, int64_t /*n_units*/, const Prepared&,
                        const RowGroupArgs& g) {
    const int64_t nb = g.nb;
    const auto levels = [&](int64_t b) {
      return tiles[b / Format::kUnitBlocks].levels[b % Format::kUnitBlocks];
    };
    const auto a = [&](int64_t b) { return g.xa->Tile(g.group, b); };
    alignas(64) float acc[kTileActRows][kTileRows] = {};
    // For pair i = blocks (2i, 2i + 1): post-process the products of pair i while those of
    // pair i + 1 run. An odd last block pairs with itself; its second product is not read.
    const int64_t n_pairs = (nb + 1) / 2;
    PairProducts p[2];
    const auto issue = [&](auto set, int64_t i) {
      const int64_t b0 = 2 * i, b1 = std::min(b0 + 1, nb - 1);
      IssuePair<decltype(set)::value>(a(b0), a(b1), kChunk, levels(b0), levels(b1));
    };
    const auto post = [&](int64_t i, const PairProducts& pp) {
      for (int j = 0; j < 2 && 2 * i + j < nb; ++j) {
        const int64_t b = 2 * i + j;
        const __m512 dw = tiles[b / Format::kUnitBlocks].d[b % Format::kUnitBlocks];
        for (int r = 0; r < g.n_rows; ++r) {
          const __m512 product = _mm512_cvtepi32_ps(_mm512_load_si512(pp.c[j][r]));
          const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(g.x[r * nb + b].d));
          _mm512_store_ps(acc[r], _mm512_fmadd_ps(product, scale, _mm512_load_ps(acc[r])));
        }
      }
    };
    using Set0 = std::integral_constant<int, 0>;
    using Set1 = std::integral_constant<int, 1>;
    issue(Set0{}, 0);
    for (int64_t i = 0; i < n_pairs; i += 2) {
      if (i + 1 < n_pairs) issue(Set1{}, i + 1);
      StorePair<0>(&p[0]);
      post(i, p[0]);
      if (i + 1 == n_pairs) break;
      if (i + 2 < n_pairs) issue(Set0{}, i + 2);
      StorePair<1>(&p[1]);
      post(i + 1, p[1]);
    }
    for (int r = 0; r < g.n_rows; ++r)
      _mm512_mask_storeu_ps(g.y + r * g.y_stride, g.mask, _mm512_load_ps(acc[r]));
  }
};

// ---- K formats: the scales folded into the levels, one product per super-block ----

// The B tiles of one unit: levels times their sub-block scale, as hi * 2^shift + lo, both s8, in
// the levels' layout (chunk t of 64 elements: hi[16t .. 16t + 16)).
struct SplitUnit {
  __m512i hi[64];
  __m512i lo[64];
  __m512i min_pairs[4];  // Q4_K: the 16-bit pair (min of sub-block 2i, of 2i + 1) per lane
};

// Bytes of `v` times the 16-bit `scale` of their dword lane, split as
// hi * 2^kShift + lo: 0 <= lo < 2^kShift, hi = the product >> kShift (arithmetic).
template <int kShift>
inline void SplitScaled(__m512i even, __m512i odd, __m512i scale, __m512i* hi, __m512i* lo) {
  const __m512i pe = _mm512_mullo_epi16(even, scale), po = _mm512_mullo_epi16(odd, scale);
  const __m512i low_bits = _mm512_set1_epi16((1 << kShift) - 1), low_byte = _mm512_set1_epi16(0xFF);
  *lo = _mm512_or_si512(_mm512_and_si512(pe, low_bits),
                        _mm512_slli_epi16(_mm512_and_si512(po, low_bits), 8));
  *hi = _mm512_or_si512(_mm512_and_si512(_mm512_srai_epi16(pe, kShift), low_byte),
                        _mm512_slli_epi16(_mm512_srai_epi16(po, kShift), 8));
}

// A 32-bit int per lane (the exact float of a decoded scale) as the 16-bit pair (s, s).
inline __m512i ScalePairs(__m512 scale) {
  const __m512i s = _mm512_and_si512(_mm512_cvtps_epi32(scale), _mm512_set1_epi32(0xFFFF));
  return _mm512_or_si512(s, _mm512_slli_epi32(s, 16));
}

// Four products per chunk (groups 0/1 x hi/lo) into C tiles: hi0 = 0, lo0 = 1, hi1 = 2, lo1 = 3.
struct alignas(64) SplitProducts {
  int32_t c[4][kTileActRows][kTileRows];
};

// Sums one unit's 4 chunks of products of hi and lo for one (two: `pair`) groups of activation
// rows; a[g] is group g's A tile of the unit's first chunk.
inline void UnitProducts(const int8_t* a0, const int8_t* a1, bool pair, const SplitUnit& w,
                         SplitProducts* p) {
  constexpr int64_t kTileBytes = kTileActRows * 64;
  _tile_zero(0);
  _tile_zero(1);
  if (pair) {
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int t = 0; t < 4; ++t) {
    _tile_loadd(4, a0 + t * kTileBytes, 64);
    _tile_loadd(6, &w.hi[16 * t], kTileRowBytes);
    _tile_loadd(7, &w.lo[16 * t], kTileRowBytes);
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    if (pair) {
      _tile_loadd(5, a1 + t * kTileBytes, 64);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    }
  }
  _tile_stored(0, p->c[0], kTileRowBytes);
  _tile_stored(1, p->c[1], kTileRowBytes);
  if (pair) {
    _tile_stored(2, p->c[2], kTileRowBytes);
    _tile_stored(3, p->c[3], kTileRowBytes);
  }
}

// The shared half of the K formats: `Split` folds a decoded unit's scales into SplitUnit, and
// `UnitSum(tile, split, sum, pass, r, u)` turns row r's super-block sum (hi * 2^shift + lo, exact
// in int32; its f32 conversion rounds only above 2^24, by at most 2 units) into the unit's f32
// contribution before the activation scale.
template <typename Derived, typename FormatT, int kShiftT>
struct AmxKFormat {
  using Format = FormatT;
  static constexpr int kChunk = 64;
  static constexpr int kGroupsPerPass = 2;
  static constexpr int kShift = kShiftT;
  using Prepared = std::vector<SplitUnit>;

  static void Prepare(typename Format::Tile* tiles, int64_t n_units, Prepared* split) {
    split->resize(static_cast<size_t>(n_units));
    for (int64_t u = 0; u < n_units; ++u) Derived::Split(tiles[u], &(*split)[u]);
  }

  // Two groups share each weight tile load; the second may be partial or absent.
  static void RowGroups(const typename Format::Tile* tiles, int64_t n_units, const Prepared& split,
                        const RowGroupArgs& g) {
    const int64_t nb = g.nb;
    const bool pair = g.n_rows > kTileActRows;
    alignas(64) float acc[2 * kTileActRows][kTileRows] = {};
    SplitProducts p;
    for (int64_t u = 0; u < n_units; ++u) {
      UnitProducts(g.xa->Tile(g.group, 4 * u), pair ? g.xa->Tile(g.group + 1, 4 * u) : nullptr,
                   pair, split[u], &p);
      const typename Format::Tile& t = tiles[u];
      const ActBlock* a = g.x + 8 * u;
      for (int r = 0; r < g.n_rows; ++r) {
        const int group = r / kTileActRows, row = r % kTileActRows;
        const __m512i sum =
            _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(p.c[2 * group][row]), kShift),
                             _mm512_load_si512(p.c[2 * group + 1][row]));
        const __m512 unit_sum = Derived::UnitSum(t, split[u], _mm512_cvtepi32_ps(sum), g, r, u);
        _mm512_store_ps(
            acc[r], _mm512_fmadd_ps(unit_sum, _mm512_set1_ps(a[r * nb].d), _mm512_load_ps(acc[r])));
      }
    }
    for (int r = 0; r < g.n_rows; ++r)
      _mm512_mask_storeu_ps(g.y + r * g.y_stride, g.mask, _mm512_load_ps(acc[r]));
  }
};

struct AmxQ4_K : AmxKFormat<AmxQ4_K, FormatQ4_K, 5> {
  static constexpr bool kUsesBlockSums = true;

  // sc * q <= 63 * 15 = 945: lo < 32, hi <= 29.
  static void Split(const Format::Tile& t, SplitUnit* out) {
    // t.min_pairs[j] is (min j, min j): the low half of the even one, the high of the odd one.
    for (int i = 0; i < 4; ++i)
      out->min_pairs[i] =
          _mm512_mask_blend_epi16(0xAAAAAAAA, t.min_pairs[2 * i], t.min_pairs[2 * i + 1]);
    const __m512i low_byte = _mm512_set1_epi16(0xFF);
    for (int s = 0; s < 8; ++s) {
      const __m512i scale = ScalePairs(t.scales[s]);
      for (int k = 8 * s; k < 8 * s + 8; ++k) {
        const __m512i v = t.levels[k];
        SplitScaled<kShift>(_mm512_and_si512(v, low_byte), _mm512_srli_epi16(v, 8), scale,
                            &out->hi[k], &out->lo[k]);
      }
    }
  }

  // d * sum - dmin * (mins . activation sums) for row r of the pass, unit u.
  static __m512 UnitSum(const Format::Tile& t, const SplitUnit& w, __m512 sum,
                        const RowGroupArgs& g, int r, int64_t u) {
    const uint32_t* sums = g.sums->Row(g.row + r, 4 * u);
    __m512i mins = _mm512_setzero_si512();
    for (int i = 0; i < 4; ++i)
      mins = _mm512_dpwssd_epi32(mins, w.min_pairs[i],
                                 _mm512_set1_epi32(static_cast<int32_t>(sums[i])));
    return _mm512_fmsub_ps(sum, t.d, _mm512_mul_ps(_mm512_cvtepi32_ps(mins), t.dmin));
  }
};

struct AmxQ6_K : AmxKFormat<AmxQ6_K, FormatQ6_K, 6> {
  static constexpr bool kUsesBlockSums = false;

  // sc * (q - 32) in [-4096, 4064]: lo < 64, hi in [-64, 63].
  static void Split(const Format::Tile& t, SplitUnit* out) {
    const __m512i low_byte = _mm512_set1_epi16(0xFF), offset = _mm512_set1_epi16(32);
    for (int s = 0; s < 16; ++s) {
      const __m512i scale = ScalePairs(t.scales[s]);
      for (int k = 4 * s; k < 4 * s + 4; ++k) {
        const __m512i v = t.levels[k];
        SplitScaled<kShift>(_mm512_sub_epi16(_mm512_and_si512(v, low_byte), offset),
                            _mm512_sub_epi16(_mm512_srli_epi16(v, 8), offset), scale, &out->hi[k],
                            &out->lo[k]);
      }
    }
  }

  static __m512 UnitSum(const Format::Tile& t, const SplitUnit&, __m512 sum, const RowGroupArgs&,
                        int, int64_t) {
    return _mm512_mul_ps(sum, t.d);
  }
};

template <typename Amx>
void QuantGemm(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes, int64_t in,
               int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  using Tile = typename Amx::Format::Tile;
  const int64_t nb = in / kActBlockSize;
  const PackedActivations xa(x, n_rows, nb, Amx::kChunk);
  std::optional<BlockSumPairs> sums;
  if constexpr (Amx::kUsesBlockSums) sums.emplace(x, n_rows, nb);
  thread_local typename Amx::Prepared prepared;
  const TileScope tile_scope(Amx::kChunk);
  constexpr int64_t kPassRows = Amx::kGroupsPerPass * kTileActRows;
  ForEachWeightTile<typename Amx::Format>(
      w, w_row_bytes, in, o_begin, o_end,
      [&](Tile* tiles, int64_t n_units, int64_t o0, TileRows rows) {
        Amx::Prepare(tiles, n_units, &prepared);
        for (int64_t r = 0; r < n_rows; r += kPassRows) {
          const RowGroupArgs pass{&xa,
                                  sums ? &*sums : nullptr,
                                  r / kTileActRows,
                                  r,
                                  x + r * nb,
                                  nb,
                                  static_cast<int>(std::min(kPassRows, n_rows - r)),
                                  rows.ValidMask(),
                                  y + r * y_stride + o0,
                                  y_stride};
          Amx::RowGroups(tiles, n_units, prepared, pass);
        }
      });
}

// Below these row counts the avx512 kernel is faster (BM_QuantGemm, kernels 1 vs 2): one A tile
// of 16 rows costs as much as the 16-row tile decode, and the K formats' scale folding is paid
// per weight tile. Q8_0 gains the least (its per-block post-processing stays).
constexpr int64_t kMinRowsQ8_0 = 32, kMinRowsKFormats = kTileActRows + 1;

}  // namespace

void QuantGemmQ8_0(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                   int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  if (n_rows < kMinRowsQ8_0)
    return avx512::QuantGemmQ8_0(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
  QuantGemm<AmxQ8_0>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void QuantGemmQ4_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                   int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  if (n_rows < kMinRowsKFormats)
    return avx512::QuantGemmQ4_K(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
  QuantGemm<AmxQ4_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void QuantGemmQ6_K(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                   int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  if (n_rows < kMinRowsKFormats)
    return avx512::QuantGemmQ6_K(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
  QuantGemm<AmxQ6_K>(x, n_rows, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

}  // namespace clover::kernels::amx
