// L2 normalisation of one vector, HF form (architecture.md §3.2 step 5).
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

// Does x[i] *= scale / sqrt(sum(x^2) + eps), in place. `scale` folds the 1/sqrt(dk) of q.
void L2Norm(float* x, int64_t n, float eps, float scale);

}  // namespace clover::kernels::ref
