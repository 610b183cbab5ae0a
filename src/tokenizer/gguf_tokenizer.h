// Tokenizer and chat template from a GGUF's embedded vocabulary (`tokenizer.ggml.*`), so a
// GGUF file alone is enough.
#pragma once

#include <string>

#include "core/status.h"
#include "io/gguf.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace clover::tokenizer {

// The llama.cpp pre-tokenizer names PreTokenizerRegexForGgufPre knows.
inline constexpr const char* kGgufPreNames[] = {"qwen2", "qwen35"};

// Returns the Qwen split regex for llama.cpp pre-tokenizer name `pre` ("qwen2" = Qwen2/Qwen3,
// "qwen35" = Qwen3.5/3.6, which adds \p{M}), or an empty string for an unknown name.
std::string PreTokenizerRegexForGgufPre(const std::string& pre);

// Returns the tokenizer in `gguf`'s metadata: model "gpt2" (byte-level BPE), tokens,
// token_type (control -> special added token, user-defined -> added token), merges and pre.
Result<Tokenizer> TokenizerFromGguf(const io::GgufFile& gguf);

// Returns the template in `tokenizer.chat_template`.
Result<ChatTemplate> ChatTemplateFromGguf(const io::GgufFile& gguf);

}  // namespace clover::tokenizer
