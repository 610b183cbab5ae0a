// The state every decoder shares (see decoder_base.h).
#include "decode/decoder_base.h"

#include <utility>

namespace clover::decode {

DecoderBase::DecoderBase(const ResolvedRequest& request, const DecodeModelInfo& model,
                         TokenTextFn token_text)
    : request_(request),
      model_(model),
      stream_(request.stop_ids, request.request.stop_strings, request.request.max_tokens,
              std::move(token_text), model.think_end_id, request.request.thinking),
      chooser_(model, request.penalties, request.stop_push, request.request.sampling),
      rng_(request.request.sampling.seed) {
  history_.AddPrompt(request_.request.prompt);
}

RowPhase DecoderBase::NextPhase() const {
  return stream_.thinking() ? RowPhase{stream_.thinking_tokens(), -1}
                            : RowPhase{-1, stream_.answer_tokens()};
}

}  // namespace clover::decode
