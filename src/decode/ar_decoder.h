// Autoregressive decoder: one causal token per pass, on the Decoder interface, so every model runs
// and Clover can be compared with its own AR mode.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "decode/decoder_base.h"

namespace clover::decode {

class ArDecoder : public DecoderBase {
 public:
  ArDecoder(const ResolvedRequest& request, const DecodeModelInfo& model, TokenTextFn token_text);

  std::vector<RowGroup> NextGroups() override;
  Result<StepEvents> Consume(std::span<const float> logits) override;
  bool finished() const override { return state_ == State::kDone; }

 private:
  // kPrefill: run the prompt. kStep: append the last chosen token. kFinalCommit: append the stop
  // token of a kept session without asking for logits.
  enum class State { kPrefill, kStep, kFinalCommit, kDone };

  State state_ = State::kPrefill;
  int64_t position_ = 0;  // committed length
  int32_t pending_ = -1;  // chosen, not yet appended
};

}  // namespace clover::decode
