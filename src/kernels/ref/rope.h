// Partial NeoX rotary embedding (architecture.md §3.3 step 3).
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

// Rotates the first `rope_dim` dims of one head vector `x` in place at position `pos`:
// pairs (i, i + rope_dim/2), angle pos * theta^(-2i/rope_dim); dims >= rope_dim are untouched.
void RopeNeox(float* x, int rope_dim, int64_t pos, double theta);

}  // namespace clover::kernels::ref
