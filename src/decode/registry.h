// The decoders a request can ask for.
#pragma once

#include <memory>

#include "core/status.h"
#include "decode/decoder.h"

namespace clover::decode {

// Returns the decoder of `request.kind` with the request's defaults resolved (request.h).
// FailedPrecondition for diffusion on a model without a mask token (clover-spec.md §4 Q4).
Result<std::unique_ptr<Decoder>> CreateDecoder(const DecodeRequest& request,
                                               const DecodeModelInfo& model,
                                               TokenTextFn token_text);

}  // namespace clover::decode
