// Streaming detokenizer.
#include "tokenizer/incremental_decoder.h"

#include "tokenizer/utf8.h"

namespace clover::tokenizer {

Result<std::string> IncrementalDecoder::Add(int32_t id) {
  CLOVER_ASSIGN_OR_RETURN(std::string_view bytes, tokenizer_.TokenBytes(id, skip_special_));
  pending_.append(bytes);
  const size_t ready = CompleteUtf8Prefix(pending_);
  std::string out = ToValidUtf8(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  return out;
}

std::string IncrementalDecoder::Flush() {
  std::string out = ToValidUtf8(pending_);
  pending_.clear();
  return out;
}

}  // namespace clover::tokenizer
