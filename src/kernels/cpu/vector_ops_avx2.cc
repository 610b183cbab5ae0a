// AVX2 vector kernels with scalar tails.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/isa_kernels.h"

namespace clover::kernels::avx2 {

float Dot(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8)
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  const __m256 v = _mm256_add_ps(acc0, acc1);
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
  float sum = _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

void Axpy(float alpha, const float* x, float* y, int64_t n) {
  const __m256 av = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += alpha * x[i];
}

void Scale(float alpha, float* y, int64_t n) {
  const __m256 av = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(av, _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] *= alpha;
}

// Column stripes of kStripe floats, as the AVX-512 kernel; the last stripe's missing columns are
// masked off (vmaskmov), so any dv runs the one loop.
void DeltaStep(float* S, int64_t dk, int64_t dv, const float* q, const float* k, const float* v,
               float decay, float beta, float* o) {
  constexpr int kVecs = 4;
  constexpr int64_t kStripe = 8 * kVecs;
  const __m256 decay_v = _mm256_set1_ps(decay);
  const __m256 beta_v = _mm256_set1_ps(beta);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t j0 = 0; j0 < dv; j0 += kStripe) {
    __m256i mask[kVecs];
    for (int c = 0; c < kVecs; ++c) {
      const int64_t left = std::clamp<int64_t>(dv - j0 - 8 * c, 0, 8);
      mask[c] = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)), lane);
    }
    __m256 u[kVecs], out[kVecs];
    for (int c = 0; c < kVecs; ++c) u[c] = out[c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < dk; ++i) {
      const __m256 ki = _mm256_set1_ps(k[i]);
      const float* row = S + i * dv + j0;
      for (int c = 0; c < kVecs; ++c)
        u[c] = _mm256_fmadd_ps(ki, _mm256_maskload_ps(row + 8 * c, mask[c]), u[c]);
    }
    for (int c = 0; c < kVecs; ++c) {
      const __m256 vj = _mm256_maskload_ps(v + j0 + 8 * c, mask[c]);
      u[c] = _mm256_mul_ps(beta_v, _mm256_fnmadd_ps(decay_v, u[c], vj));  // u = delta
    }
    for (int64_t i = 0; i < dk; ++i) {
      const __m256 ki = _mm256_set1_ps(k[i]);
      const __m256 qi = _mm256_set1_ps(q[i]);
      float* row = S + i * dv + j0;
      for (int c = 0; c < kVecs; ++c) {
        const __m256 s = _mm256_fmadd_ps(
            ki, u[c], _mm256_mul_ps(decay_v, _mm256_maskload_ps(row + 8 * c, mask[c])));
        _mm256_maskstore_ps(row + 8 * c, mask[c], s);
        out[c] = _mm256_fmadd_ps(qi, s, out[c]);
      }
    }
    for (int c = 0; c < kVecs; ++c) _mm256_maskstore_ps(o + j0 + 8 * c, mask[c], out[c]);
  }
}

}  // namespace clover::kernels::avx2
