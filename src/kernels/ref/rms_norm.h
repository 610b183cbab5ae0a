// RMSNorm variants (architecture.md §3.1): plain-weight RMSNorm and the GDN gated RMSNorm.
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

// Does out[i] = x[i] / sqrt(mean(x^2) + eps) * w[i] (w == nullptr: no weight). Zero-centred
// norms arrive with the +1 already applied (model/weights.h). `out` may alias `x`.
void RmsNorm(const float* x, const float* w, int64_t n, float eps, float* out);
// Does out[i] = RmsNorm(o)[i] * w[i] * SiLU(z[i]) (norm first, gate second). `out` may alias `o`.
void GatedRmsNorm(const float* o, const float* z, const float* w, int64_t n, float eps, float* out);

}  // namespace clover::kernels::ref
