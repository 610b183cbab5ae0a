// Jinja evaluator: walks the syntax tree with Python Jinja2 semantics (scoping, Undefined,
// loop variables, macros) and bounded resources.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/value.h"

namespace clover::tokenizer::jinja {

// Bounds that turn runaway templates into errors instead of crashes or hangs.
struct RenderLimits {
  size_t max_output_bytes = 16u << 20;  // 16 MiB: far above any chat prompt
  int max_call_depth = 64;              // nested macro calls
  uint64_t max_steps = 20'000'000;      // evaluated nodes
  size_t max_sequence = 1u << 20;       // elements made by range() / repetition
};

// Returns the output of `body` with `globals` as the template's variables; `name` labels
// errors ("template NAME:LINE:COL: TypeError: ...").
Result<std::string> Evaluate(const std::vector<NodePtr>& body, const ValueDict& globals,
                             const std::string& name, const RenderLimits& limits);

}  // namespace clover::tokenizer::jinja
