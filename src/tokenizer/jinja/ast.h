// Jinja syntax tree: one node type with a kind tag; which fields a kind uses is listed below.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace clover::tokenizer::jinja {

enum class NodeKind {
  // Statements (children of a body).
  kText,      // name = the text
  kOutput,    // args[0] = expression
  kIf,        // args[0] = condition; body; else_body (an `elif` is a nested kIf there)
  kFor,       // names = targets; args[0] = iterable, args[1] = optional filter; body; else_body
  kSet,       // names = targets (or [namespace, attribute] when `attr`); args[0] = value
  kSetBlock,  // names[0] = target; body
  kMacro,     // name; names = parameters; args = defaults (null where none); body
  kBreak,
  kContinue,
  // Expressions.
  kLiteral,   // literal
  kName,      // name
  kGetAttr,   // args[0] = object; name
  kGetItem,   // args[0] = object, args[1] = key
  kSlice,     // args[0] = object; args[1..3] = start, stop, step (null when omitted)
  kCall,      // args[0] = callee, then positional args; kwargs
  kFilter,    // name; args[0] = operand, then args; kwargs
  kTest,      // name; args[0] = operand, then args; negated
  kUnary,     // name = "-", "+" or "not"; args[0]
  kBinary,    // name = operator; args[0], args[1] (and/or short-circuit)
  kCondExpr,  // args[0] = value, args[1] = condition, args[2] = else value (may be null)
  kList,      // args = items
  kTuple,     // args = items
  kDict,      // args = key0, value0, key1, value1, ...
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeKind kind;
  int line = 0;
  int column = 0;
  std::string name;
  std::vector<std::string> names;
  std::vector<NodePtr> args;
  std::vector<std::pair<std::string, NodePtr>> kwargs;
  std::vector<NodePtr> body;
  std::vector<NodePtr> else_body;
  Value literal;
  bool negated = false;
  bool attr = false;  // kSet: `set ns.attr = ...`
  int height = 1;     // expression tree height, bounded by the parser
};

}  // namespace clover::tokenizer::jinja
