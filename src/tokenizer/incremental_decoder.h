// Streaming detokenizer: turns ids into text as they arrive without ever emitting a partial
// UTF-8 sequence.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "tokenizer/tokenizer.h"

namespace clover::tokenizer {

class IncrementalDecoder {
 public:
  // `tokenizer` must outlive the decoder.
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool skip_special = false)
      : tokenizer_(tokenizer), skip_special_(skip_special) {}

  // Returns the text that `id` completes (empty while a multi-byte character is unfinished).
  // Bytes that can never become valid UTF-8 come out as U+FFFD right away.
  Result<std::string> Add(int32_t id);
  // Returns the rest, an unfinished sequence replaced by U+FFFD (as HF's decode does).
  std::string Flush();

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_;
  std::string pending_;
};

}  // namespace clover::tokenizer
