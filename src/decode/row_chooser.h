// The per-row choice shared by every decoder: logit processors in clover-decoding.md §4 step 1
// order (suppression, penalties, stop push), then greedy or seeded sampling.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/status.h"
#include "decode/decoder.h"
#include "decode/penalties.h"
#include "decode/sampling.h"

namespace clover::decode {

// Where a row sits in the stop-push counters (clover-spec.md §4 Q7); -1 = not counted there.
struct RowPhase {
  int64_t thinking_index = -1;  // index among thinking tokens, while inside <think>
  int64_t answer_index = -1;    // index among answer tokens (after </think>, or all)
};

class RowChooser {
 public:
  RowChooser(const DecodeModelInfo& model, const PenaltyParams& penalties,
             const StopPushParams& stop_push, const SamplingParams& sampling);

  // Processes a copy of `raw` (one logits row, vocab_size wide) and returns the chosen token with
  // its probability under the processed distribution. The mask id and padded ids are never chosen.
  Result<TokenChoice> Choose(std::span<const float> raw, const TokenHistory& history,
                             RowPhase phase, Rng& rng);

 private:
  DecodeModelInfo model_;
  PenaltyParams penalties_;
  StopPushParams stop_push_;
  SamplingParams sampling_;
  std::vector<int32_t> suppressed_;
  std::vector<float> row_;
  std::vector<std::pair<double, int32_t>> scratch_;
};

}  // namespace clover::decode
