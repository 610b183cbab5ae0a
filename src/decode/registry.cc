// Decoder construction by kind (see registry.h).
#include "decode/registry.h"

#include <string>
#include <utility>

#include "decode/ar_decoder.h"
#include "decode/block_diffusion_decoder.h"
#include "decode/request.h"
#include "decode/speculative_decoder.h"

namespace clover::decode {

Result<std::unique_ptr<Decoder>> CreateDecoder(const DecodeRequest& request,
                                               const DecodeModelInfo& model,
                                               TokenTextFn token_text) {
  if (!token_text) return InvalidArgument("decode: no token text function was given");
  CLOVER_ASSIGN_OR_RETURN(ResolvedRequest resolved, ResolveRequest(request, model));
  switch (request.kind) {
    case DecoderKind::kAr:
      return std::unique_ptr<Decoder>(
          std::make_unique<ArDecoder>(resolved, model, std::move(token_text)));
    case DecoderKind::kDiffusion:
    case DecoderKind::kFrontier:
    case DecoderKind::kSpeculative:
      if (!model.mask_token_id)
        return FailedPrecondition(
            std::string("decode: ") +
            (request.kind == DecoderKind::kSpeculative ? "speculative (draft-self)" : "diffusion") +
            " decoding needs the model's mask_token_id (config mask_token_id / GGUF "
            "clover_moe.mask_token_id), and this model has none");
      if (*model.mask_token_id < 0 || *model.mask_token_id >= model.vocab_size)
        return InvalidArgument("decode: mask_token_id " + std::to_string(*model.mask_token_id) +
                               " is outside the vocabulary of " + std::to_string(model.vocab_size));
      if (request.kind == DecoderKind::kSpeculative)
        return std::unique_ptr<Decoder>(
            std::make_unique<SpeculativeDecoder>(resolved, model, std::move(token_text)));
      return std::unique_ptr<Decoder>(
          std::make_unique<BlockDiffusionDecoder>(resolved, model, std::move(token_text)));
  }
  return Internal("decode: unknown decoder kind");
}

}  // namespace clover::decode
