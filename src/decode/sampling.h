// Token choice from one logits row: greedy argmax or seeded temperature/top-k/top-p/min-p sampling.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "core/status.h"

namespace clover::decode {

// Request sampling parameters. `temperature` <= 0 means greedy; the filters apply only when
// sampling.
struct SamplingParams {
  float temperature = 0.0f;
  float top_p = 1.0f;  // nucleus mass in (0, 1]; 1 = off
  int top_k = 0;       // 0 = off
  float min_p = 0.0f;  // keep p >= min_p * p_max; 0 = off
  uint64_t seed = 0;

  bool greedy() const { return temperature <= 0.0f; }
};

// Returns InvalidArgument naming the field when a value is outside its range.
Status ValidateSamplingParams(const SamplingParams& params);

// Per-request random source. mt19937_64's output sequence is fixed by the C++ standard and the
// conversion to doubles is ours, so a seed gives the same draws on every platform (the standard
// distributions are implementation-defined and are not used).
class Rng {
 public:
  explicit Rng(uint64_t seed);
  // Returns a uniform double in [0, 1) built from the top 53 bits of one 64-bit draw.
  double NextUniform();

 private:
  std::mt19937_64 engine_;
};

// A chosen token and its probability under the final (processed, filtered) distribution; the
// probability is the confidence LowConfidence compares with tau.
struct TokenChoice {
  int32_t token = -1;
  double prob = 0.0;
};

// Returns the argmax of `logits` (ties -> lowest id) and its softmax probability (f64, max
// subtracted). Entries equal to -inf are masked out. InvalidArgument when every entry is masked.
Result<TokenChoice> ChooseGreedy(std::span<const float> logits);

// Samples from softmax(logits / temperature) after top-k, then top-p, then min-p (the order of
// llama.cpp's default chain), renormalised. -inf entries are masked. Draws exactly one uniform
// from `rng`. `scratch` is reused across calls to avoid allocation.
Result<TokenChoice> ChooseSampled(std::span<const float> logits, const SamplingParams& params,
                                  Rng& rng, std::vector<std::pair<double, int32_t>>& scratch);

}  // namespace clover::decode
