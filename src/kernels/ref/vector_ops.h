// Reference vector kernels: dot product (double accumulation), axpy, scale.
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

// Returns sum_i a[i] * b[i], accumulated in double.
float Dot(const float* a, const float* b, int64_t n);
// Does y[i] += alpha * x[i].
void Axpy(float alpha, const float* x, float* y, int64_t n);
// Does y[i] *= alpha.
void Scale(float alpha, float* y, int64_t n);

}  // namespace clover::kernels::ref
