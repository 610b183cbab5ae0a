// Numerically stable softmax of one vector.
#pragma once

#include <cstdint>

namespace clover::kernels::ref {

// Does x = softmax(x) in place (max subtracted, normaliser summed in double).
void Softmax(float* x, int64_t n);

}  // namespace clover::kernels::ref
