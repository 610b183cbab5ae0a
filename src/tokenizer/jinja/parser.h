// Jinja parser: tokens -> syntax tree, for the subset Hugging Face chat templates use.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"

namespace clover::tokenizer::jinja {

// Returns the statement list of the template. Constructs outside the supported subset
// (include, extends, call blocks, unknown filters/tests, ...) fail with kUnimplemented naming
// the construct and "template NAME:LINE:COL".
Result<std::vector<NodePtr>> Parse(const std::vector<Token>& tokens, const std::string& name);

}  // namespace clover::tokenizer::jinja
