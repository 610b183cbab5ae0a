// AVX2 activation quantizer (kernels/quantize.h), bit for bit the reference: _mm256_cvtps_epi32
// rounds in the default mode, to nearest even, as the reference's lrintf does.
#include <immintrin.h>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/quantize.h"

namespace clover::kernels::avx2 {
namespace {

inline int HorizontalSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

}  // namespace

void QuantizeActivations(const float* x, int64_t n_rows, int64_t x_stride, int64_t in,
                         ActBlock* out, int64_t scale_block) {
  const int64_t nb = in / kActBlockSize;
  const int64_t per_scale = scale_block / kActBlockSize;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
  // packs_epi32/packs_epi16 interleave the two 128-bit lanes; this puts the dwords back in order.
  const __m256i unshuffle = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * x_stride;
    for (int64_t s = 0; s < nb / per_scale; ++s) {
      const float* v = xr + s * scale_block;
      __m256 amax_v = _mm256_setzero_ps();
      for (int64_t i = 0; i < scale_block; i += 8)
        amax_v = _mm256_max_ps(amax_v, _mm256_andnot_ps(sign, _mm256_loadu_ps(v + i)));
      __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax_v), _mm256_extractf128_ps(amax_v, 1));
      m = _mm_max_ps(m, _mm_movehl_ps(m, m));
      const float amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
      const float d = amax / 127.0f;
      const __m256 id = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
      for (int64_t b = 0; b < per_scale; ++b) {
        ActBlock& a = out[r * nb + s * per_scale + b];
        a.d = d;
        const float* vb = v + b * kActBlockSize;
        __m256i q[4];
        for (int j = 0; j < 4; ++j)
          q[j] = _mm256_min_epi32(
              hi, _mm256_max_epi32(lo, _mm256_cvtps_epi32(
                                           _mm256_mul_ps(_mm256_loadu_ps(vb + 8 * j), id))));
        const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]),
                                                 _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.q),
                            _mm256_permutevar8x32_epi32(bytes, unshuffle));
        a.sum[0] = static_cast<int16_t>(HorizontalSum(_mm256_add_epi32(q[0], q[1])));
        a.sum[1] = static_cast<int16_t>(HorizontalSum(_mm256_add_epi32(q[2], q[3])));
      }
    }
  }
}

}  // namespace clover::kernels::avx2
