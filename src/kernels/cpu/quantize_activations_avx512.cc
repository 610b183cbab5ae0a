// AVX-512 activation quantizer (kernels/quantize.h): the same levels, scales and half sums as the
// reference, which rounds with lrintf; _mm512_cvtps_epi32 rounds in the same (default, to nearest
// even) mode, so the two agree bit for bit. The reference's scalar lrintf calls cost 8-10 % of
// prefill (perf, docs/benchmarks.md).
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/quantize.h"

namespace clover::kernels::avx512 {
namespace {

inline float AbsMax(const float* v, int64_t n) {
  __m512 m = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(v + i)));
  return _mm512_reduce_max_ps(m);
}

inline __m512 BroadcastScale(float id) { return _mm512_set1_ps(id); }

inline void QuantizeBlock(const float* v, __m512 id, ActBlock& a) {
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  for (int h = 0; h < 2; ++h) {
    const __m512i q = _mm512_min_epi32(
        hi,
        _mm512_max_epi32(lo, _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(v + 16 * h), id))));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(a.q + 16 * h), _mm512_cvtepi32_epi8(q));
    a.sum[h] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
  }
}

}  // namespace

#include "kernels/cpu/quantize_activations-inl.h"

}  // namespace clover::kernels::avx512
