// Resolves a tokenizer source as the CLI names it: a tokenizer.json file, a model directory, or
// a GGUF file.
#pragma once

#include <string>

#include "core/status.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace clover::tokenizer {

// Returns the tokenizer of `src`: a .gguf file (embedded vocabulary), a directory holding
// tokenizer.json, or a tokenizer.json file.
Result<Tokenizer> LoadTokenizer(const std::string& src);
// Returns the chat template of `src`: a .gguf (tokenizer.chat_template), a directory
// (chat_template.jinja, else tokenizer_config.json), a tokenizer.json (its sibling files), a
// tokenizer_config.json, or a .jinja file.
Result<ChatTemplate> LoadChatTemplate(const std::string& src);

}  // namespace clover::tokenizer
