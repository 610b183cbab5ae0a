// LowConfidence row selection for one preview pass and the EOS rule that ends a block
// (clover-decoding.md §4, §5).
#pragma once

#include <cstdint>
#include <cstddef>
#include <span>
#include <vector>

namespace clover::decode {

enum class RowState { kMasked, kFixed };

// One row of the block being resolved; `token` is meaningful only when fixed.
struct BlockRow {
  RowState state = RowState::kMasked;
  int32_t token = -1;
};

// A masked row's choice in this pass: the processed argmax (or sampled token) and its
// probability under the processed distribution.
struct RowCandidate {
  int row = 0;
  int32_t token = -1;
  double confidence = 0.0;
};

// Returns the indices into `candidates` to fix, ascending: every candidate with confidence > tau
// (strict, as SGLang/Fast-dLLM v2); if none, the single most confident (first on ties). tau <= 0
// fixes all; tau > 1 therefore always fixes exactly one. Empty only when `candidates` is empty.
std::vector<size_t> SelectLowConfidence(std::span<const RowCandidate> candidates, double tau);

// Frontier-stride selection (clover-decoding.md §7.2) for the `pass`-th pass over a block (0-based):
// every candidate LowConfidence(tau) fixes, plus the k most confident with confidence >= floor,
// k = clamp(ceil(n / max(target_iters - pass, 1)), 1, max_stride), n = candidates; if that is
// empty, the single most confident. Indices ascending. A superset of SelectLowConfidence's when
// that one fixes anything above tau.
std::vector<size_t> SelectFrontier(std::span<const RowCandidate> candidates, double tau, int pass,
                                   double floor, int target_iters, int max_stride);

// State of a block after a pass, by the EOS rule of clover-decoding.md §5.2-3.
struct BlockEnd {
  bool resolved = false;  // no further pass over this block
  int length = 0;         // rows [0, length) form the output (an ending stop id included)
  bool stopped = false;   // the output ends with a stop id
};

// Returns whether the block is resolved: let e be the first fixed row holding a stop id; if every
// row before e is fixed the block ends now with rows [0, e] (rows after e are discarded even if
// fixed). Otherwise it is resolved when the first `needed` rows are all fixed (`needed` < block
// size when max_tokens cuts the block: rows past it are never emitted, and fixed rows never
// change, so resolving them cannot change the output).
BlockEnd EvaluateBlockEnd(std::span<const BlockRow> rows, std::span<const int32_t> stop_ids,
                          int needed);

}  // namespace clover::decode
