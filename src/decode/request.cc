// Request validation and defaults (see request.h), plus the enum names of decoder.h.
#include "decode/request.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace clover::decode {

const char* DecoderKindName(DecoderKind kind) {
  switch (kind) {
    case DecoderKind::kAr:
      return "ar";
    case DecoderKind::kDiffusion:
      return "diffusion";
    case DecoderKind::kFrontier:
      return "frontier";
    case DecoderKind::kSpeculative:
      return "speculative";
  }
  return "?";
}

const char* FinishReasonName(FinishReason reason) {
  return reason == FinishReason::kStop ? "stop" : "length";
}

Result<DecoderKind> ParseDecoderKind(std::string_view name) {
  if (name == "ar") return DecoderKind::kAr;
  if (name == "diffusion") return DecoderKind::kDiffusion;
  if (name == "frontier") return DecoderKind::kFrontier;
  if (name == "speculative") return DecoderKind::kSpeculative;
  return InvalidArgument(
      "decoder: expected \"ar\", \"diffusion\", \"frontier\" or \"speculative\", found \"" +
      std::string(name) + "\"");
}

DecodeModelInfo DecodeModelInfoFromConfig(const model::ModelConfig& config, int64_t n_valid_tokens,
                                          std::optional<int32_t> think_end_id) {
  DecodeModelInfo m;
  m.vocab_size = config.vocab_size;
  m.n_valid_tokens = std::min(n_valid_tokens, config.vocab_size);
  if (config.mask_token_id) m.mask_token_id = static_cast<int32_t>(*config.mask_token_id);
  for (int64_t id : config.eos_token_ids) m.eos_ids.push_back(static_cast<int32_t>(id));
  m.think_end_id = think_end_id;
  m.is_clover = config.family == model::ModelFamily::kCloverMoe;
  m.block_size = config.diffusion.block_size;
  m.shift_logits = config.diffusion.shift_logits;
  m.block_alignment = config.diffusion.block_alignment;
  return m;
}

Result<ResolvedRequest> ResolveRequest(const DecodeRequest& request, const DecodeModelInfo& model) {
  if (model.vocab_size < 1 || model.n_valid_tokens < 1 || model.n_valid_tokens > model.vocab_size)
    return InvalidArgument("decode: model vocab_size " + std::to_string(model.vocab_size) +
                           " and n_valid_tokens " + std::to_string(model.n_valid_tokens) +
                           ": expected 1 <= n_valid_tokens <= vocab_size");
  if (request.prompt.empty()) return InvalidArgument("decode: the prompt has no tokens");
  for (size_t i = 0; i < request.prompt.size(); ++i) {
    const int32_t id = request.prompt[i];
    if (id < 0 || id >= model.vocab_size)
      return InvalidArgument("decode: prompt token " + std::to_string(i) + " is id " +
                             std::to_string(id) + ", expected 0 <= id < " +
                             std::to_string(model.vocab_size));
  }
  if (request.max_tokens < 1)
    return InvalidArgument("decode: max_tokens expected >= 1, found " +
                           std::to_string(request.max_tokens));
  if (!std::isfinite(request.threshold))
    return InvalidArgument("decode: threshold expected finite, found " +
                           std::to_string(request.threshold));
  CLOVER_TRY(ValidateSamplingParams(request.sampling));

  ResolvedRequest r;
  r.request = request;
  r.penalties = ResolvePenalties(request.penalties, model.is_clover);
  CLOVER_TRY(ValidatePenaltyParams(r.penalties));
  r.stop_push = request.stop_push ? *request.stop_push
                                  : (model.is_clover ? kCloverReleaseStopPush : StopPushParams{});
  CLOVER_TRY(ValidateStopPushParams(r.stop_push));

  r.stop_ids = model.eos_ids;
  for (int32_t id : request.stop_ids) {
    if (std::find(r.stop_ids.begin(), r.stop_ids.end(), id) == r.stop_ids.end())
      r.stop_ids.push_back(id);
  }

  r.block_size = request.block_size != 0 ? request.block_size : model.block_size;
  if (IsBlockDecoder(request.kind) && r.block_size != 8 && r.block_size != 16 &&
      r.block_size != 32)
    return InvalidArgument("decode: block size expected 8, 16 or 32, found " +
                           std::to_string(r.block_size));
  if (request.reuse_passes < 0)
    return InvalidArgument("decode: reuse_passes expected >= 0 (0 = off), found " +
                           std::to_string(request.reuse_passes));
  const FrontierParams& f = request.frontier;
  if (request.kind == DecoderKind::kFrontier &&
      (!(f.floor >= 0.0 && f.floor <= 1.0) || f.target_iters < 1 || f.max_stride < 1))
    return InvalidArgument("decode: frontier floor expected in [0, 1], target_iters >= 1 and "
                           "max_stride >= 1, found " + std::to_string(f.floor) + ", " +
                           std::to_string(f.target_iters) + ", " + std::to_string(f.max_stride));
  const SpeculativeParams& sp = request.speculative;
  if (request.kind == DecoderKind::kSpeculative &&
      !(sp.draft_min >= 1 && sp.draft_min <= sp.draft_max && sp.draft_max <= kMaxDraftTokens))
    return InvalidArgument("decode: speculative draft_min and draft_max expected 1 <= draft_min <= "
                           "draft_max <= " + std::to_string(kMaxDraftTokens) + ", found " +
                           std::to_string(sp.draft_min) + " and " + std::to_string(sp.draft_max));
  return r;
}

}  // namespace clover::decode
