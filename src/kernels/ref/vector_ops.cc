// Reference vector kernels.
#include "kernels/ref/vector_ops.h"

#include <cstddef>
#include <vector>

namespace clover::kernels::ref {

float Dot(const float* a, const float* b, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(acc);
}

void Axpy(float alpha, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void Scale(float alpha, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= alpha;
}

void DeltaStep(float* S, int64_t dk, int64_t dv, const float* q, const float* k, const float* v,
               float decay, float beta, float* o) {
  // Kept per thread: decode calls this for every head of every GDN layer and token.
  thread_local std::vector<float> u;
  u.assign(static_cast<size_t>(dv), 0.0f);
  for (int64_t i = 0; i < dk; ++i)
    for (int64_t j = 0; j < dv; ++j) u[j] += k[i] * S[i * dv + j];
  for (int64_t j = 0; j < dv; ++j) u[j] = beta * (v[j] - decay * u[j]);  // u = delta
  for (int64_t j = 0; j < dv; ++j) o[j] = 0.0f;
  for (int64_t i = 0; i < dk; ++i) {
    for (int64_t j = 0; j < dv; ++j) {
      float& s = S[i * dv + j];
      s = decay * s + k[i] * u[j];
      o[j] += q[i] * s;
    }
  }
}

}  // namespace clover::kernels::ref
