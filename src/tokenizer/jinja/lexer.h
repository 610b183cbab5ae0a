// Jinja lexer: template text -> tokens, with the whitespace rules transformers sets up
// (trim_blocks, lstrip_blocks, and the `-`/`+` markers on tags).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace clover::tokenizer::jinja {

enum class TokenKind {
  kText,        // literal template text (whitespace rules already applied)
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,      // text holds the unescaped value
  kInteger,
  kFloat,
  kOperator,    // + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  kEnd,
};

struct Token {
  TokenKind kind;
  std::string text;
  int line;
  int column;
};

// Returns the tokens of `source`; `name` labels errors as "template NAME:LINE:COL".
Result<std::vector<Token>> Lex(std::string_view source, const std::string& name);

}  // namespace clover::tokenizer::jinja
