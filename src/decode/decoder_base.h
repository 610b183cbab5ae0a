// DecoderBase: what every decoder carries — the resolved request, the model facts, the answer
// stream, the per-row chooser with the token history and rng it reads, and the counters.
#pragma once

#include "decode/answer_stream.h"
#include "decode/decoder.h"
#include "decode/request.h"
#include "decode/row_chooser.h"

namespace clover::decode {

class DecoderBase : public Decoder {
 public:
  const DecodeCounters& counters() const override { return counters_; }

 protected:
  // The history starts with the request's prompt; the stream with its stops and budget.
  DecoderBase(const ResolvedRequest& request, const DecodeModelInfo& model, TokenTextFn token_text);

  // Where the next emitted token sits in the stop-push counters.
  RowPhase NextPhase() const;

  ResolvedRequest request_;
  DecodeModelInfo model_;
  AnswerStream stream_;
  RowChooser chooser_;
  TokenHistory history_;
  Rng rng_;
  DecodeCounters counters_;
};

}  // namespace clover::decode
