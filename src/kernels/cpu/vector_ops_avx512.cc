// AVX-512 vector kernels with masked tails.
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/cpu/isa_kernels.h"

namespace clover::kernels::avx512 {
namespace {
inline __mmask16 TailMask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
}  // namespace

float Dot(const float* a, const float* b, int64_t n) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : TailMask(n - i);
    acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

void Axpy(float alpha, const float* x, float* y, int64_t n) {
  const __m512 av = _mm512_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  if (i < n) {
    const __mmask16 m = TailMask(n - i);
    _mm512_mask_storeu_ps(
        y + i, m,
        _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
  }
}

void Scale(float alpha, float* y, int64_t n) {
  const __m512 av = _mm512_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(av, _mm512_loadu_ps(y + i)));
  if (i < n) {
    const __mmask16 m = TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(av, _mm512_maskz_loadu_ps(m, y + i)));
  }
}

// Column stripes of kStripe floats: the stripe's u and o stay in registers, and its dk rows
// (32 KiB at dk 128) stay in L1 from the first pass over S to the second.
void DeltaStep(float* S, int64_t dk, int64_t dv, const float* q, const float* k, const float* v,
               float decay, float beta, float* o) {
  constexpr int kVecs = 4;
  constexpr int64_t kStripe = 16 * kVecs;
  const __m512 decay_v = _mm512_set1_ps(decay);
  const __m512 beta_v = _mm512_set1_ps(beta);
  for (int64_t j0 = 0; j0 < dv; j0 += kStripe) {
    __mmask16 mask[kVecs];
    for (int c = 0; c < kVecs; ++c) {
      const int64_t left = dv - j0 - 16 * c;
      mask[c] = left >= 16 ? static_cast<__mmask16>(0xFFFF)
                           : left <= 0 ? static_cast<__mmask16>(0) : TailMask(left);
    }
    __m512 u[kVecs], out[kVecs];
    for (int c = 0; c < kVecs; ++c) u[c] = out[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < dk; ++i) {
      const __m512 ki = _mm512_set1_ps(k[i]);
      const float* row = S + i * dv + j0;
      for (int c = 0; c < kVecs; ++c)
        u[c] = _mm512_fmadd_ps(ki, _mm512_maskz_loadu_ps(mask[c], row + 16 * c), u[c]);
    }
    for (int c = 0; c < kVecs; ++c) {
      const __m512 vj = _mm512_maskz_loadu_ps(mask[c], v + j0 + 16 * c);
      u[c] = _mm512_mul_ps(beta_v, _mm512_fnmadd_ps(decay_v, u[c], vj));  // u = delta
    }
    for (int64_t i = 0; i < dk; ++i) {
      const __m512 ki = _mm512_set1_ps(k[i]);
      const __m512 qi = _mm512_set1_ps(q[i]);
      float* row = S + i * dv + j0;
      for (int c = 0; c < kVecs; ++c) {
        const __m512 s = _mm512_fmadd_ps(
            ki, u[c], _mm512_mul_ps(decay_v, _mm512_maskz_loadu_ps(mask[c], row + 16 * c)));
        _mm512_mask_storeu_ps(row + 16 * c, mask[c], s);
        out[c] = _mm512_fmadd_ps(qi, s, out[c]);
      }
    }
    for (int c = 0; c < kVecs; ++c) _mm512_mask_storeu_ps(o + j0 + 16 * c, mask[c], out[c]);
  }
}

}  // namespace clover::kernels::avx512
