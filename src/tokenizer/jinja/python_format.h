// Python's text forms of Jinja values: str(), repr(), float repr and json.dumps.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "tokenizer/jinja/value.h"

namespace clover::tokenizer::jinja {

// Returns Python `repr(x)` of a float ("1.0", "1e-07", "-0.0", "inf").
std::string FormatFloat(double x);
// Returns the decimal digits of `i`.
std::string FormatInt(Int i);
// Returns Python `str(v)` (Undefined prints as "").
std::string PyStr(const Value& v);
// Returns Python `repr(v)` (strings quoted the way Python picks quotes).
std::string PyRepr(const Value& v);

struct JsonDumpsOptions {
  std::optional<std::string> indent;  // nullopt: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};

// Returns `json.dumps(v, ...)`; fails on values JSON cannot hold (Undefined, namespace, ...).
Result<std::string> JsonDumps(const Value& v, const JsonDumpsOptions& options);

}  // namespace clover::tokenizer::jinja
