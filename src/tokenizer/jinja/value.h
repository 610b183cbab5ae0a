// Jinja runtime values with Python semantics: None, bool, int (wide enough for JSON's uint64),
// float, str, list, dict (insertion-ordered), namespace, callables, and Undefined.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace clover::tokenizer::jinja {

class Value;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<std::string, Value>>;  // key order kept, as Python's dict
using Kwargs = std::vector<std::pair<std::string, Value>>;
// A callable (macro or builtin): positional args, keyword args -> value or error.
using NativeFunction = std::function<Result<Value>(const ValueList&, const Kwargs&)>;
// Python ints in templates come from JSON (up to uint64) or small literals; 128 bits hold both.
using Int = __int128;

enum class ValueKind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kFunction };

class Value {
 public:
  Value() = default;  // Undefined
  static Value Undefined(std::string hint);
  static Value None();
  static Value Bool(bool b);
  static Value Integer(Int i);
  static Value Float(double f);
  static Value String(std::string s);
  static Value List(ValueList items);
  static Value Dict(ValueDict items);
  static Value Namespace(ValueDict items);
  static Value Function(std::string name, NativeFunction fn);
  // Returns the value of JSON `j` (objects keep key order; ints stay ints).
  static Value FromJson(const nlohmann::ordered_json& j);

  ValueKind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == ValueKind::kUndefined; }
  bool is_none() const { return kind_ == ValueKind::kNone; }
  bool is_string() const { return kind_ == ValueKind::kString; }
  bool is_list() const { return kind_ == ValueKind::kList; }
  bool is_dict() const { return kind_ == ValueKind::kDict; }
  bool is_number() const {
    return kind_ == ValueKind::kInt || kind_ == ValueKind::kFloat || kind_ == ValueKind::kBool;
  }

  bool bool_value() const { return b_; }
  Int int_value() const { return i_; }
  double float_value() const { return f_; }
  // Returns the number as a double (bool, int or float).
  double AsDouble() const;
  const std::string& str() const { return s_; }
  // For kUndefined: why the value is undefined, in Jinja's words.
  const std::string& hint() const { return s_; }
  const ValueList& list() const { return *list_; }
  ValueDict& dict() const { return *dict_; }  // also the attributes of a namespace
  const NativeFunction& function() const { return *fn_; }
  const std::string& function_name() const { return s_; }

  // Returns the entry `key` of a dict/namespace, or nullptr.
  const Value* Find(const std::string& key) const;
  // Python truthiness (Undefined is false).
  bool Truthy() const;
  // Python type name as used in error messages ("str", "list", "NoneType", ...).
  const char* TypeName() const;

 private:
  ValueKind kind_ = ValueKind::kUndefined;
  bool b_ = false;
  Int i_ = 0;
  double f_ = 0;
  std::string s_;
  std::shared_ptr<const ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  std::shared_ptr<const NativeFunction> fn_;
};

// Python `==`.
bool Equal(const Value& a, const Value& b);

}  // namespace clover::tokenizer::jinja
