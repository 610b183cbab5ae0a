// Per-row logit processing and choice (see row_chooser.h).
#include "decode/row_chooser.h"

namespace clover::decode {

RowChooser::RowChooser(const DecodeModelInfo& model, const PenaltyParams& penalties,
                       const StopPushParams& stop_push, const SamplingParams& sampling)
    : model_(model), penalties_(penalties), stop_push_(stop_push), sampling_(sampling) {
  if (model.mask_token_id) suppressed_.push_back(*model.mask_token_id);
}

Result<TokenChoice> RowChooser::Choose(std::span<const float> raw, const TokenHistory& history,
                                       RowPhase phase, Rng& rng) {
  row_.assign(raw.begin(), raw.end());
  SuppressTokens(row_, suppressed_, model_.n_valid_tokens);
  history.Apply(row_, penalties_);
  if (stop_push_.enabled) {
    auto push = [&](int32_t id, float bias) {
      if (bias != 0.0f && id >= 0 && static_cast<size_t>(id) < row_.size())
        row_[static_cast<size_t>(id)] += bias;
    };
    if (model_.think_end_id)
      push(*model_.think_end_id,
           StopPushBias(phase.thinking_index, stop_push_.think_start, stop_push_));
    const float eos_bias = StopPushBias(phase.answer_index, stop_push_.eos_start, stop_push_);
    for (int32_t id : model_.eos_ids) push(id, eos_bias);
  }
  if (sampling_.greedy()) return ChooseGreedy(row_);
  return ChooseSampled(row_, sampling_, rng, scratch_);
}

}  // namespace clover::decode
