// Validation of a DecodeRequest against the model and resolution of its defaults.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "decode/decoder.h"

namespace clover::decode {

// A request with every default filled in.
struct ResolvedRequest {
  DecodeRequest request;
  PenaltyParams penalties;        // ResolvePenalties(request.penalties, model.is_clover)
  StopPushParams stop_push;       // request's, else the release push on Clover, else off
  std::vector<int32_t> stop_ids;  // model EOS ids + request stop ids, deduplicated
  int block_size = 0;             // request's, else the model's
};

// Checks the request (prompt ids in the vocabulary, max_tokens >= 1, sampling, penalties, stop
// push, tau finite, block size 8/16/32 for diffusion) and fills its defaults. InvalidArgument
// names the offending field.
Result<ResolvedRequest> ResolveRequest(const DecodeRequest& request, const DecodeModelInfo& model);

// Parses "ar" / "diffusion".
Result<DecoderKind> ParseDecoderKind(std::string_view name);

}  // namespace clover::decode
