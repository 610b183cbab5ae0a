// RMSNorm and the GDN gated RMSNorm on the device, row by row (kernels/ref/rms_norm.h).
#pragma once

#include <cstdint>

#include "core/status.h"
#include "kernels/cuda/device.h"

namespace clover::kernels::cuda {

// For each of `n_rows` rows of `n` floats: out = x / sqrt(mean(x^2) + eps) * w (w == nullptr: no
// weight; `w` holds n floats shared by every row). Device pointers; `out` may alias `x`.
Status RmsNorm(Device& device, const float* x, int64_t x_stride, const float* w, int64_t n,
               int64_t n_rows, float eps, float* out, int64_t out_stride);

// For each row: out = RmsNorm(o) * w * SiLU(z) (norm first, gate second), the GDN output norm
// with one row per (token, v-head). Device pointers; `out` may alias `o`.
Status GatedRmsNorm(Device& device, const float* o, int64_t o_stride, const float* z,
                    int64_t z_stride, const float* w, int64_t n, int64_t n_rows, float eps,
                    float* out, int64_t out_stride);

}  // namespace clover::kernels::cuda
