// Scalar activations shared by the forward and the references: SiLU, sigmoid, softplus.
#pragma once

#include <cmath>

namespace clover::kernels::ref {

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float Silu(float x) { return x / (1.0f + std::exp(-x)); }
// Thresholded like torch/llama.cpp (architecture.md §6.3): x > 20 returns x, avoiding exp overflow.
inline float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

}  // namespace clover::kernels::ref
