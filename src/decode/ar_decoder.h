// Autoregressive decoder: one causal token per pass, on the Decoder interface, so every model runs
// and Clover can be compared with its own AR mode.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "decode/answer_stream.h"
#include "decode/decoder.h"
#include "decode/request.h"
#include "decode/row_chooser.h"

namespace clover::decode {

class ArDecoder : public Decoder {
 public:
  ArDecoder(const ResolvedRequest& request, const DecodeModelInfo& model, TokenTextFn token_text);

  std::vector<RowGroup> NextGroups() override;
  Result<StepEvents> Consume(std::span<const float> logits) override;
  bool finished() const override { return state_ == State::kDone; }
  const DecodeCounters& counters() const override { return counters_; }

 private:
  // kPrefill: run the prompt. kStep: append the last chosen token. kFinalCommit: append the stop
  // token of a kept session without asking for logits.
  enum class State { kPrefill, kStep, kFinalCommit, kDone };

  ResolvedRequest request_;
  DecodeModelInfo model_;
  AnswerStream stream_;
  RowChooser chooser_;
  TokenHistory history_;
  Rng rng_;
  DecodeCounters counters_;
  State state_ = State::kPrefill;
  int64_t position_ = 0;  // committed length
  int32_t pending_ = -1;  // chosen, not yet appended
};

}  // namespace clover::decode
