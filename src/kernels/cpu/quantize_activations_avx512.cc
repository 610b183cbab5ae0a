// AVX-512 activation quantizer (kernels/quantize.h): the same levels, scales and half sums as the
// reference, which rounds with lrintf; _mm512_cvtps_epi32 rounds in the same (default, to nearest
// even) mode, so the two agree bit for bit. The reference's scalar lrintf calls cost ~8 % of a
// 32-row diffusion pass (perf, docs/benchmarks.md).
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/quantize.h"

namespace clover::kernels::avx512 {

void QuantizeActivations(const float* x, int64_t n_rows, int64_t x_stride, int64_t in,
                         ActBlock* out, int64_t scale_block) {
  const int64_t nb = in / kActBlockSize;
  const int64_t per_scale = scale_block / kActBlockSize;
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * x_stride;
    for (int64_t s = 0; s < nb / per_scale; ++s) {
      const float* v = xr + s * scale_block;
      __m512 amax_v = _mm512_setzero_ps();
      for (int64_t i = 0; i < scale_block; i += 16)
        amax_v = _mm512_max_ps(amax_v, _mm512_abs_ps(_mm512_loadu_ps(v + i)));
      const float amax = _mm512_reduce_max_ps(amax_v);
      const float d = amax / 127.0f;
      const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
      for (int64_t b = 0; b < per_scale; ++b) {
        ActBlock& a = out[r * nb + s * per_scale + b];
        a.d = d;
        const float* vb = v + b * kActBlockSize;
        for (int h = 0; h < 2; ++h) {
          const __m512i q = _mm512_min_epi32(
              hi, _mm512_max_epi32(lo, _mm512_cvtps_epi32(
                                           _mm512_mul_ps(_mm512_loadu_ps(vb + 16 * h), id))));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(a.q + 16 * h), _mm512_cvtepi32_epi8(q));
          a.sum[h] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
        }
      }
    }
  }
}

}  // namespace clover::kernels::avx512
