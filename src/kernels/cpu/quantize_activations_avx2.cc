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

inline float AbsMax(const float* v, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m8 = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8)
    m8 = _mm256_max_ps(m8, _mm256_andnot_ps(sign, _mm256_loadu_ps(v + i)));
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
}

inline __m256 BroadcastScale(float id) { return _mm256_set1_ps(id); }

inline void QuantizeBlock(const float* v, __m256 id, ActBlock& a) {
  const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
  __m256i q[4];
  for (int j = 0; j < 4; ++j)
    q[j] = _mm256_min_epi32(
        hi,
        _mm256_max_epi32(lo, _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(v + 8 * j), id))));
  // packs_epi32/packs_epi16 interleave the two 128-bit lanes; the permute puts the dwords back in
  // order. The levels are within +-127 already, so the saturating packs are exact.
  const __m256i bytes =
      _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(a.q),
      _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  a.sum[0] = static_cast<int16_t>(HorizontalSum(_mm256_add_epi32(q[0], q[1])));
  a.sum[1] = static_cast<int16_t>(HorizontalSum(_mm256_add_epi32(q[2], q[3])));
}

}  // namespace

#include "kernels/cpu/quantize_activations-inl.h"

}  // namespace clover::kernels::avx2
