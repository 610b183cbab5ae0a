// The quantized formats on 512-bit registers (AVX-512BW + VNNI), for the few-row products that
// decode and the diffusion passes run per expert. Textually included by quant_matmul-inl.h inside
// the AVX-512 namespace only (no include guard, like the file that includes it).
//
// Why a second kernel: the 256-bit one multiplies every 32-element integer dot by its sub-block
// scale (vpmulld) and adds the Q4_K mins / Q6_K offsets in scalar code, so one core decodes Q4_K
// at ~16 GB/s, half of what one core can stream from memory. Here one zmm covers 64 weights,
// u8 x s8 pairs go to int16 (maddubs, no saturation: 15 * 127 * 2 and 63 * 127 * 2 < 2^15) and
// `vpdpwssd` multiplies them by the sub-block scales while adding into int32, so a scale costs
// nothing extra; mins and offsets are one int16 dot against the activations' 16-element sums.
//
// The activations are repacked once per call into the order the weights decode in (values
// contiguous, 16-element sums, one scale per 256), which is what lets every load be one zmm.

namespace {

struct WideActivations {
  std::vector<int8_t> q;       // rows * in values
  std::vector<int16_t> sum16;  // rows * in / 16 sums of 16 values
  std::vector<float> d;        // rows * in / 256 scales (MatMul gives K formats one per 256)
};

// Activation rows per register tile; the weights of a super-block are decoded once per tile.
constexpr int kWideTileRows = 4;

// Block j of each super-block goes to slot[j] of its super-block in `q` (the order the weights
// decode in); the 16-element sums and the scales stay in the activations' own order.
inline void PackWideActivations(const ActBlock* x, int64_t n_rows, int64_t nb, const int (&slot)[8],
                                WideActivations* p) {
  const int64_t blocks = n_rows * nb;
  p->q.resize(static_cast<size_t>(blocks * kActBlockSize));
  p->sum16.resize(static_cast<size_t>(blocks * 2));
  p->d.resize(static_cast<size_t>(blocks / 8));
  PackHalfSums(x, blocks, p->sum16.data());
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t to = b - b % 8 + slot[b % 8];
    std::memcpy(p->q.data() + to * kActBlockSize, x[b].q, kActBlockSize);
    if (b % 8 == 0) p->d[b / 8] = x[b].d;
  }
}

inline __m512i Load512(const void* p) { return _mm512_loadu_si512(p); }

// Lanes 0..15 of each zmm take index `lo`, lanes 16..31 `hi` (int16 permute indices).
inline __m512i HalfIndex(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(lo)),
                            _mm256_set1_epi16(static_cast<int16_t>(hi)), 1);
}

// Each format: `Activations` and `Pack(x, n_rows, nb, packed)`, and `Vectors<R>(packed, r0, nb,
// w, acc)` for R <= kTileRows, which dots one weight row `w` with the R activation rows from row
// r0 (nb blocks of 32 a row): acc[r]'s 16 lanes add up to row r's product. The driver adds up the
// lanes of four weight rows at once (SumLanes4): a 512-bit horizontal sum per output costs as much
// as a whole super-block's products when a row holds only 2-8 super-blocks (an expert's down and
// gate/up projections).

// The level vectors of WideQ4_K: a 64-byte load of a super-block's levels holds sub-blocks 2c,
// 2c + 2 in its low nibbles and 2c + 1, 2c + 3 in its high ones.
constexpr int kQ4_KPairs[4][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};

// In-lane byte shuffles of WideQ4_K::ScalesAndMins (in every 128-bit lane) into int16 lanes, the
// high bytes zeroed (index -1): for level vector k, int16 lanes 0-15 take the scale of sub-block
// kQ4_KPairs[k][0] and lanes 16-31 kQ4_KPairs[k][1]; for the mins, each min twice, against the
// two 16-element sums of its sub-block. Tables in memory: built inside the kernel they cost a
// store-forwarding stall per weight row.
struct Q4_KShuffles {
  alignas(64) int8_t scale[4][64];
  alignas(32) int8_t mins[32];
};
constexpr Q4_KShuffles MakeQ4_KShuffles() {
  Q4_KShuffles t{};
  for (int i = 0; i < 64; ++i)
    for (int k = 0; k < 4; ++k)
      t.scale[k][i] = static_cast<int8_t>(i % 2 == 1 ? -1 : kQ4_KPairs[k][i < 32 ? 0 : 1]);
  for (int i = 0; i < 32; ++i) t.mins[i] = static_cast<int8_t>(i % 2 == 1 ? -1 : 8 + i / 4);
  return t;
}
constexpr Q4_KShuffles kQ4_KShuffles = MakeQ4_KShuffles();

struct WideQ4_K {
  static constexpr int64_t kBlockBytes = 144;
  static constexpr int kTileRows = kWideTileRows;
  using Activations = WideActivations;
  // The activations in the order of the level vectors (kQ4_KPairs): 0 2 1 3 4 6 5 7.
  static constexpr int kSlot[8] = {0, 2, 1, 3, 4, 6, 5, 7};
  static void Pack(const ActBlock* x, int64_t n_rows, int64_t nb, Activations* p) {
    PackWideActivations(x, n_rows, nb, kSlot, p);
  }

  // Bytes 0-7: the 6-bit scales of the 8 sub-blocks, 8-15: their mins, from the 12 bytes at
  // `packed` (ref/dequantize.cc's layout: bytes 0-3 scales 0-3 and the top bits of scales 4-7,
  // 4-7 the same for the mins, 8-11 the low nibbles of scales 4-7 and the high of mins 4-7).
  static __m128i ScalesAndMins(const uint8_t* packed) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));
    const __m128i low =
        _mm_shuffle_epi8(raw, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const __m128i top = _mm_shuffle_epi8(
        raw, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    const __m128i low_mask =
        _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0);
    const __m128i shifted_mask = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15);
    // A 16-bit shift moves the neighbour byte's bits only into the bits the masks clear.
    return _mm_or_si128(_mm_or_si128(_mm_and_si128(low, low_mask),
                                     _mm_and_si128(_mm_srli_epi16(low, 4), shifted_mask)),
                        _mm_and_si128(_mm_srli_epi16(top, 2), _mm_set1_epi8(0x30)));
  }

  template <int R>
  static void Vectors(const WideActivations& a, int64_t r0, int64_t nb, const uint8_t* w,
                      __m512* acc) {
    const int64_t nsb = nb / 8;
    const int8_t* aq = a.q.data();
    const int16_t* asum16 = a.sum16.data();
    const float* ad = a.d.data();
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i scale_index[4] = {
        Load512(kQ4_KShuffles.scale[0]), Load512(kQ4_KShuffles.scale[1]),
        Load512(kQ4_KShuffles.scale[2]), Load512(kQ4_KShuffles.scale[3])};
    const __m256i min_index = Load256(kQ4_KShuffles.mins);
    __m256 acc_min[R];
    for (int r = 0; r < R; ++r) {
      acc[r] = _mm512_setzero_ps();
      acc_min[r] = _mm256_setzero_ps();
    }
    for (int64_t sb = 0; sb < nsb; ++sb) {
      const uint8_t* blk = w + sb * kBlockBytes;
      int32_t d_pair;
      std::memcpy(&d_pair, blk, 4);
      const __m128 d_dmin = _mm_cvtph_ps(_mm_cvtsi32_si128(d_pair));
      const __m512 d = _mm512_broadcastss_ps(d_dmin);
      const __m256 dmin = _mm256_broadcastss_ps(_mm_movehdup_ps(d_dmin));
      const __m512i scales_mins = _mm512_broadcast_i32x4(ScalesAndMins(blk + 4));
      const __m256i mins = _mm256_shuffle_epi8(_mm512_castsi512_si256(scales_mins), min_index);
      __m512i wq[4], scale[4];
      for (int h = 0; h < 2; ++h) {
        const __m512i raw = Load512(blk + 16 + 64 * h);
        wq[2 * h] = _mm512_and_si512(raw, low4);
        wq[2 * h + 1] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4);
      }
      for (int k = 0; k < 4; ++k) scale[k] = _mm512_shuffle_epi8(scales_mins, scale_index[k]);
      for (int r = 0; r < R; ++r) {
        const int64_t at = (r0 + r) * nsb + sb;
        const int8_t* q = aq + at * 256;
        __m512i isum = _mm512_setzero_si512();
        for (int k = 0; k < 4; ++k)
          isum =
              _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(wq[k], Load512(q + 64 * k)), scale[k]);
        acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(isum), d), _mm512_set1_ps(ad[at]),
                                 acc[r]);
        const __m256i min_dot = _mm256_madd_epi16(mins, Load256(asum16 + at * 16));
        acc_min[r] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(min_dot), dmin),
                                     _mm256_set1_ps(ad[at]), acc_min[r]);
      }
    }
    // The mins are subtracted once, in the lower 8 lanes.
    for (int r = 0; r < R; ++r) acc[r] = _mm512_sub_ps(acc[r], _mm512_zextps256_ps512(acc_min[r]));
  }
};

struct WideQ6_K {
  static constexpr int64_t kBlockBytes = 210;
  static constexpr int kTileRows = kWideTileRows;
  using Activations = WideActivations;
  static constexpr int kSlot[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  static void Pack(const ActBlock* x, int64_t n_rows, int64_t nb, Activations* p) {
    PackWideActivations(x, n_rows, nb, kSlot, p);
  }

  template <int R>
  static void Vectors(const WideActivations& a, int64_t r0, int64_t nb, const uint8_t* w,
                      __m512* acc) {
    const int64_t nsb = nb / 8;
    const int8_t* aq = a.q.data();
    const int16_t* asum16 = a.sum16.data();
    const float* ad = a.d.data();
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i high2 = _mm512_set1_epi8(0x30);
    // Bits 4-5 of each 6-bit value come from qh: for the four 32-value groups of a 128-value
    // half, (qh << 4), (qh << 2), qh, (qh >> 2), each masked to 0x30. Lower zmm half the first
    // group of a pair, upper half the second.
    const __m512i left = HalfIndex(4, 2);
    const __m512i right = HalfIndex(0, 2);
    // wq[k] holds values 64k .. 64k+63; its int16 lane i (2 values) belongs to scale 4k + i/8.
    __m512i scale_index[4];
    for (int k = 0; k < 4; ++k) {
      alignas(64) int16_t idx[32];
      for (int i = 0; i < 32; ++i) idx[i] = static_cast<int16_t>(4 * k + i / 8);
      scale_index[k] = Load512(idx);
    }
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nsb; ++sb) {
      const uint8_t* blk = w + sb * kBlockBytes;
      const float d = LoadHalf(blk + 208);
      // 16 signed scales, one per 16 values.
      const __m256i sc16 =
          _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 192)));
      const __m512i sc_all = _mm512_broadcast_i64x4(sc16);
      __m512i wq[4], scale[4];
      for (int h = 0; h < 2; ++h) {
        const __m512i ql = Load512(blk + 64 * h);
        const __m512i qh = _mm512_broadcast_i64x4(Load256(blk + 128 + 32 * h));
        wq[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, low4),
                                    _mm512_and_si512(_mm512_sllv_epi16(qh, left), high2));
        wq[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                                        _mm512_and_si512(_mm512_srlv_epi16(qh, right), high2));
      }
      for (int k = 0; k < 4; ++k) scale[k] = _mm512_permutexvar_epi16(scale_index[k], sc_all);
      for (int r = 0; r < R; ++r) {
        const int64_t at = (r0 + r) * nsb + sb;
        const int8_t* q = aq + at * 256;
        __m512i isum = _mm512_setzero_si512();
        for (int k = 0; k < 4; ++k)
          isum =
              _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(wq[k], Load512(q + 64 * k)), scale[k]);
        // The stored values are offset by 32: subtract 32 * sum(scale * 16-value sum).
        const __m256i offset = _mm256_madd_epi16(sc16, Load256(asum16 + at * 16));
        isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(_mm256_slli_epi32(offset, 5)));
        acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * ad[at]), _mm512_cvtepi32_ps(isum), acc[r]);
      }
    }
  }
};

// Q8_0's activations for the wide kernel: the levels contiguous, and per block of 32 its scale
// and -128 * scale * (the sum of its levels), which takes off the +128 that makes the weight
// levels unsigned for vpdpbusd.
struct WideQ8_0Activations {
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<float> bias;
};

// Q8_0 on 512-bit registers, one activation row at a time (decode; from two rows the 256-bit
// kernel shares its per-block scale work between them). The 256-bit kernel spends a scalar f16
// conversion, a multiply and a broadcast on every 34-byte block, more than the block takes to
// arrive from memory when no other row shares them; here eight blocks' scales are inserted into
// one vector and convert together, and a zmm holds two blocks, each lane meeting its own block's
// scale (a permute of the eight). Not a gather: vpgatherdd merges into its destination register,
// and GCC gave it one the previous group's last fma wrote, which chained every group to the one
// before (21.7 GB/s in L2 on a Zen 5 core; 48 GB/s without it, docs/benchmarks.md).
struct WideQ8_0 {
  static constexpr int kTileRows = 1;
  static constexpr int64_t kBlockBytes = 34;
  static constexpr int64_t kGroupBlocks = 8;
  using Activations = WideQ8_0Activations;

  static void Pack(const ActBlock* x, int64_t n_rows, int64_t nb, Activations* p) {
    const int64_t blocks = n_rows * nb;
    p->q.resize(static_cast<size_t>(blocks * kActBlockSize));
    p->d.resize(static_cast<size_t>(blocks));
    p->bias.resize(static_cast<size_t>(blocks));
    for (int64_t b = 0; b < blocks; ++b) {
      std::memcpy(p->q.data() + b * kActBlockSize, x[b].q, kActBlockSize);
      p->d[b] = x[b].d;
      p->bias[b] = -128.0f * x[b].d * static_cast<float>(x[b].sum[0] + x[b].sum[1]);
    }
  }

  template <int R>
  static void Vectors(const Activations& a, int64_t r0, int64_t nb, const uint8_t* w, __m512* out) {
    static_assert(R == 1);
    const __m512i unsigned_bias = _mm512_set1_epi8(static_cast<char>(0x80));
    // Pair p of the group: lanes 0-7 take scale 2p, lanes 8-15 scale 2p + 1.
    __m512i pick[4];
    for (int p = 0; p < 4; ++p)
      pick[p] = _mm512_inserti64x4(_mm512_set1_epi32(2 * p), _mm256_set1_epi32(2 * p + 1), 1);
    const int8_t* q = a.q.data() + r0 * nb * kActBlockSize;
    const float* dx = a.d.data() + r0 * nb;
    const float* bias = a.bias.data() + r0 * nb;
    // Two accumulators: four dependent fmas a group would be a 16-cycle chain.
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    __m256 acc_bias = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + kGroupBlocks <= nb; b += kGroupBlocks) {
      const uint8_t* blk = w + b * kBlockBytes;
      // The f16 scale is the low half of the dword at each block's start.
      uint16_t halves[kGroupBlocks];
      for (int64_t i = 0; i < kGroupBlocks; ++i) std::memcpy(&halves[i], blk + i * kBlockBytes, 2);
      const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(halves)));
      const __m512 scale = _mm512_castps256_ps512(_mm256_mul_ps(dw, _mm256_loadu_ps(dx + b)));
      acc_bias = _mm256_fmadd_ps(dw, _mm256_loadu_ps(bias + b), acc_bias);
      for (int p = 0; p < 4; ++p) {
        const __m512i wq = _mm512_xor_si512(
            _mm512_inserti64x4(_mm512_castsi256_si512(Load256(blk + 2 * p * kBlockBytes + 2)),
                               Load256(blk + (2 * p + 1) * kBlockBytes + 2), 1),
            unsigned_bias);
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wq,
                                                Load512(q + (b + 2 * p) * kActBlockSize));
        acc[p % 2] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_permutexvar_ps(pick[p], scale),
                                     acc[p % 2]);
      }
    }
    // The last nb % 8 blocks one at a time.
    __m256 tail = _mm256_setzero_ps();
    float tail_bias = 0.0f;
    for (; b < nb; ++b) {
      const uint8_t* blk = w + b * kBlockBytes;
      const float dw = LoadHalf(blk);
      const __m256i wq = _mm256_xor_si256(Load256(blk + 2), _mm512_castsi512_si256(unsigned_bias));
      const __m256i dot =
          _mm256_dpbusd_epi32(_mm256_setzero_si256(), wq, Load256(q + b * kActBlockSize));
      tail = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(dw * dx[b]), tail);
      tail_bias += dw * bias[b];
    }
    tail = _mm256_add_ps(_mm256_add_ps(tail, acc_bias),
                         _mm256_setr_ps(tail_bias, 0, 0, 0, 0, 0, 0, 0));
    out[0] = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_zextps256_ps512(tail));
  }
};

// {sum of a's lanes, b's, c's, d's}.
inline __m128 SumLanes4(__m512 a, __m512 b, __m512 c, __m512 d) {
  auto fold = [](__m512 v) {
    return _mm256_add_ps(_mm512_castps512_ps256(v),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  };
  const __m256 abcd =
      _mm256_hadd_ps(_mm256_hadd_ps(fold(a), fold(b)), _mm256_hadd_ps(fold(c), fold(d)));
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

// Output rows whose lanes SumLanes4 adds up together.
constexpr int64_t kWideOutputGroup = 4;

// y[(r0 + r) * y_stride + o + k] for r < R, k < count <= kWideOutputGroup, from the weight rows
// at w. Before weight row k, row k + ahead is requested if k < prefetch_rows: one row at a time
// between the products, as the hardware streams it (a group's rows at once measured slower).
struct WideOutputGroup {
  const uint8_t* w;
  int64_t w_row_bytes;
  int64_t o;
  int64_t count;
  int64_t ahead;
  int64_t prefetch_rows;
};

template <typename Wide, int R>
inline void WideOutputs(const typename Wide::Activations& a, int64_t r0, int64_t nb,
                        const WideOutputGroup& g, float* y, int64_t y_stride) {
  __m512 acc[kWideOutputGroup][R];
  for (int64_t k = 0; k < g.count; ++k) {
    const uint8_t* row = g.w + k * g.w_row_bytes;
    if (k < g.prefetch_rows) PrefetchRow(row + g.ahead * g.w_row_bytes, g.w_row_bytes);
    Wide::template Vectors<R>(a, r0, nb, row, acc[k]);
  }
  const int64_t o = g.o, count = g.count;
  if (count == kWideOutputGroup) {
    for (int r = 0; r < R; ++r)
      _mm_storeu_ps(y + (r0 + r) * y_stride + o,
                    SumLanes4(acc[0][r], acc[1][r], acc[2][r], acc[3][r]));
    return;
  }
  for (int64_t k = 0; k < count; ++k)
    for (int r = 0; r < R; ++r) y[(r0 + r) * y_stride + o + k] = _mm512_reduce_add_ps(acc[k][r]);
}

template <typename Wide, int R>
inline void WideOutputsUpTo(const typename Wide::Activations& a, int64_t r0, int64_t n_rows,
                            int64_t nb, const WideOutputGroup& g, float* y, int64_t y_stride) {
  if constexpr (R > 1) {
    if (n_rows < R) {
      WideOutputsUpTo<Wide, R - 1>(a, r0, n_rows, nb, g, y, y_stride);
      return;
    }
  }
  WideOutputs<Wide, R>(a, r0, nb, g, y, y_stride);
}

template <typename Wide>
void WideQuantMatMul(const ActBlock* x, int64_t n_rows, const void* w, int64_t w_row_bytes,
                     int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  thread_local typename Wide::Activations packed;
  const int64_t nb = in / kActBlockSize;
  Wide::Pack(x, n_rows, nb, &packed);
  const auto* wb = static_cast<const uint8_t*>(w);
  constexpr int kTileRows = Wide::kTileRows;
  const int64_t ahead = PrefetchDistanceRows(w_row_bytes);
  for (int64_t ob = o_begin; ob < o_end; ob += kQuantWeightBlock) {
    const int64_t oe = std::min(o_end, ob + kQuantWeightBlock);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kTileRows) {
      const int64_t nr = std::min<int64_t>(kTileRows, n_rows - r0);
      for (int64_t o = ob; o < oe; o += kWideOutputGroup) {
        const int64_t count = std::min(kWideOutputGroup, oe - o);
        // The first tile of a weight block reads it from memory; later tiles find it in L2.
        const int64_t prefetch_rows = r0 == 0 ? std::max<int64_t>(0, o_end - (o + ahead)) : 0;
        const WideOutputGroup group{wb + o * w_row_bytes, w_row_bytes, o, count, ahead,
                                    prefetch_rows};
        WideOutputsUpTo<Wide, kTileRows>(packed, r0, nr, nb, group, y, y_stride);
      }
    }
  }
}

}  // namespace
