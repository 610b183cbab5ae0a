// Jinja builtins: filters, tests, and the Python methods of str/dict/list that templates call.
// Errors carry Python's exception type and message ("TypeError: ..."); the evaluator adds where.
#pragma once

#include <string>

#include "core/status.h"
#include "tokenizer/jinja/value.h"

namespace clover::tokenizer::jinja {

// Returns true for filter names `ApplyFilter` knows.
bool IsKnownFilter(const std::string& name);
// Returns true for test names `ApplyTest` knows.
bool IsKnownTest(const std::string& name);

// Returns `value | name(args, kwargs)`.
Result<Value> ApplyFilter(const std::string& name, const Value& value, const ValueList& args,
                          const Kwargs& kwargs);
// Returns `value is name(args)`.
Result<bool> ApplyTest(const std::string& name, const Value& value, const ValueList& args);
// Calls method `name` of `object` (e.g. str.startswith, dict.items); sets `*found` false (and
// returns None) when the type has no such method.
Result<Value> CallMethod(const Value& object, const std::string& name, const ValueList& args,
                         const Kwargs& kwargs, bool* found);
// Returns the items a for loop visits: list elements, dict keys, string characters.
Result<ValueList> Iterate(const Value& v);
// Returns Python's `len(v)` or a TypeError.
Result<Int> Length(const Value& v);

}  // namespace clover::tokenizer::jinja
