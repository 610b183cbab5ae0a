// Autoregressive decoder (see ar_decoder.h).
#include "decode/ar_decoder.h"

#include <string>
#include <utility>

#include "core/check.h"

namespace clover::decode {

ArDecoder::ArDecoder(const ResolvedRequest& request, const DecodeModelInfo& model,
                     TokenTextFn token_text)
    : DecoderBase(request, model, std::move(token_text)) {}

std::vector<RowGroup> ArDecoder::NextGroups() {
  switch (state_) {
    case State::kPrefill: {
      const int last = static_cast<int>(request_.request.prompt.size()) - 1;
      return {RowGroup{GroupMode::kAppend, 0, request_.request.prompt, {last}}};
    }
    case State::kStep:
      return {RowGroup{GroupMode::kAppend, position_, {pending_}, {0}}};
    case State::kFinalCommit:
      return {RowGroup{GroupMode::kAppend, position_, {pending_}, {}}};
    case State::kDone:
      return {};
  }
  return {};
}

Result<StepEvents> ArDecoder::Consume(std::span<const float> logits) {
  if (state_ == State::kDone)
    return FailedPrecondition("ar decoder: Consume called after the request finished");
  const size_t want = state_ == State::kFinalCommit ? 0 : static_cast<size_t>(model_.vocab_size);
  if (logits.size() != want)
    return InvalidArgument("ar decoder: expected " + std::to_string(want) + " logits (1 row x " +
                           std::to_string(model_.vocab_size) + "), found " +
                           std::to_string(logits.size()));
  StepEvents events;
  if (state_ == State::kPrefill) {
    position_ = static_cast<int64_t>(request_.request.prompt.size());
    counters_.prefill_rows += position_;
    events.committed = position_;
  } else {
    ++counters_.ar_passes;
    ++position_;
    events.committed = 1;
    if (state_ == State::kFinalCommit) {
      state_ = State::kDone;
      return events;
    }
  }

  CLOVER_ASSIGN_OR_RETURN(TokenChoice choice,
                          chooser_.Choose(logits, history_, NextPhase(), rng_));
  CLOVER_CHECK(!model_.mask_token_id || choice.token != *model_.mask_token_id);
  const int32_t token = choice.token;
  stream_.Emit({&token, 1}, events);
  history_.AddGenerated(token);
  counters_.tokens = stream_.generated();
  pending_ = token;
  if (!stream_.finished()) {
    state_ = State::kStep;
  } else {
    state_ = request_.request.keep_session ? State::kFinalCommit : State::kDone;
  }
  return events;
}

}  // namespace clover::decode
