// Validation of a DecodeRequest against the model and resolution of its defaults.
#pragma once

#include <cstdint>
#include <optional>
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

// Returns the decoder's view of `config`: vocab width, mask/EOS ids, Clover flag and diffusion
// fields. `n_valid_tokens` is the tokenizer's size (ids past it are padding); `think_end_id` is
// the tokenizer's `</think>` id when it has one.
DecodeModelInfo DecodeModelInfoFromConfig(const model::ModelConfig& config, int64_t n_valid_tokens,
                                          std::optional<int32_t> think_end_id);

// The longest draft a speculative round may verify: a block's worth of rows.
inline constexpr int kMaxDraftTokens = 32;

// Parses "ar" / "diffusion" / "frontier" / "speculative".
Result<DecoderKind> ParseDecoderKind(std::string_view name);

}  // namespace clover::decode
