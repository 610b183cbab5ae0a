// Reference vector kernels: dot product (double accumulation), axpy, scale, delta-rule step.
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

// Returns sum_i a[i] * b[i], accumulated in double.
float Dot(const float* a, const float* b, int64_t n);
// Does y[i] += alpha * x[i].
void Axpy(float alpha, const float* x, float* y, int64_t n);
// Does y[i] *= alpha.
void Scale(float alpha, float* y, int64_t n);
// One gated delta-rule step of one head (kernel_table.h DeltaStepFn).
void DeltaStep(float* S, int64_t dk, int64_t dv, const float* q, const float* k, const float* v,
               float decay, float beta, float* o);

}  // namespace clover::kernels::ref
