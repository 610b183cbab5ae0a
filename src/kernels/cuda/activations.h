// The SiLU-gated MLP activation (SwiGLU) on the device.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "kernels/cuda/device.h"

namespace clover::kernels::cuda {

// For `n_rows` rows of `n` floats: out[i] = SiLU(gate[i]) * up[i] (kernels/ref/activations.h),
// as the MoE and shared-expert FFNs apply between their gate/up and down projections. Device
// pointers; `out` may alias `gate` or `up`.
Status SiluMul(Device& device, const float* gate, int64_t gate_stride, const float* up,
               int64_t up_stride, int64_t n, int64_t n_rows, float* out, int64_t out_stride);

}  // namespace clover::kernels::cuda
