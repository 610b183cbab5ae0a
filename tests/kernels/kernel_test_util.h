// Helpers shared by the kernel tests: seeded random data, the ISAs to test, error measures.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/cpu_features.h"

namespace clover::kernels::testing {

// Returns `n` values uniform in [-1, 1] excluding a neighbourhood of 0 (non-zero data).
inline std::vector<float> RandomVector(int64_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(0.05f, 1.0f);
  std::bernoulli_distribution sign(0.5);
  std::vector<float> v(n);
  for (float& x : v) x = scale * (sign(rng) ? dist(rng) : -dist(rng));
  return v;
}

// Returns every ISA this machine can run (ref first).
inline std::vector<Isa> AvailableIsas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kRef, Isa::kAvx2, Isa::kAvx512, Isa::kAmx})
    if (IsaSupported(isa, DetectCpuFeatures())) isas.push_back(isa);
  return isas;
}

// Returns max |a - b| / max(max |b|, tiny).
inline double MaxRelError(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0.0, den = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

inline double MaxRelError(const std::vector<float>& a, const std::vector<float>& b) {
  return MaxRelError(a, std::vector<double>(b.begin(), b.end()));
}

}  // namespace clover::kernels::testing
