// Jinja value construction, JSON conversion, truthiness and equality.
#include "tokenizer/jinja/value.h"

namespace clover::tokenizer::jinja {

Value Value::Undefined(std::string hint) {
  Value v;
  v.s_ = std::move(hint);
  return v;
}
Value Value::None() {
  Value v;
  v.kind_ = ValueKind::kNone;
  return v;
}
Value Value::Bool(bool b) {
  Value v;
  v.kind_ = ValueKind::kBool;
  v.b_ = b;
  return v;
}
Value Value::Integer(Int i) {
  Value v;
  v.kind_ = ValueKind::kInt;
  v.i_ = i;
  return v;
}
Value Value::Float(double f) {
  Value v;
  v.kind_ = ValueKind::kFloat;
  v.f_ = f;
  return v;
}
Value Value::String(std::string s) {
  Value v;
  v.kind_ = ValueKind::kString;
  v.s_ = std::move(s);
  return v;
}
Value Value::List(ValueList items) {
  Value v;
  v.kind_ = ValueKind::kList;
  v.list_ = std::make_shared<const ValueList>(std::move(items));
  return v;
}
Value Value::Dict(ValueDict items) {
  Value v;
  v.kind_ = ValueKind::kDict;
  v.dict_ = std::make_shared<ValueDict>(std::move(items));
  return v;
}
Value Value::Namespace(ValueDict items) {
  Value v = Dict(std::move(items));
  v.kind_ = ValueKind::kNamespace;
  return v;
}
Value Value::Function(std::string name, NativeFunction fn) {
  Value v;
  v.kind_ = ValueKind::kFunction;
  v.s_ = std::move(name);
  v.fn_ = std::make_shared<const NativeFunction>(std::move(fn));
  return v;
}

Value Value::FromJson(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return None();
    case nlohmann::ordered_json::value_t::boolean:
      return Bool(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Integer(j.get<uint64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return Float(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return String(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(FromJson(e));
      return List(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      ValueDict items;
      items.reserve(j.size());
      for (const auto& [k, e] : j.items()) items.emplace_back(k, FromJson(e));
      return Dict(std::move(items));
    }
    default:
      return None();  // binary / discarded never come out of the JSON parser
  }
}

double Value::AsDouble() const {
  switch (kind_) {
    case ValueKind::kBool:
      return b_ ? 1 : 0;
    case ValueKind::kInt:
      return static_cast<double>(i_);
    default:
      return f_;
  }
}

const Value* Value::Find(const std::string& key) const {
  if (kind_ != ValueKind::kDict && kind_ != ValueKind::kNamespace) return nullptr;
  for (const auto& [k, v] : *dict_) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool Value::Truthy() const {
  switch (kind_) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return false;
    case ValueKind::kBool:
      return b_;
    case ValueKind::kInt:
      return i_ != 0;
    case ValueKind::kFloat:
      return f_ != 0;
    case ValueKind::kString:
      return !s_.empty();
    case ValueKind::kList:
      return !list_->empty();
    case ValueKind::kDict:
      return !dict_->empty();
    default:
      return true;
  }
}

const char* Value::TypeName() const {
  switch (kind_) {
    case ValueKind::kUndefined:
      return "Undefined";
    case ValueKind::kNone:
      return "NoneType";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kFloat:
      return "float";
    case ValueKind::kString:
      return "str";
    case ValueKind::kList:
      return "list";
    case ValueKind::kDict:
      return "dict";
    case ValueKind::kNamespace:
      return "Namespace";
    case ValueKind::kFunction:
      return "function";
  }
  return "object";
}

bool Equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind() == ValueKind::kFloat || b.kind() == ValueKind::kFloat) {
      return a.AsDouble() == b.AsDouble();
    }
    const Int x = a.kind() == ValueKind::kBool ? a.bool_value() : a.int_value();
    const Int y = b.kind() == ValueKind::kBool ? b.bool_value() : b.int_value();
    return x == y;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return true;
    case ValueKind::kString:
      return a.str() == b.str();
    case ValueKind::kList: {
      if (a.list().size() != b.list().size()) return false;
      for (size_t i = 0; i < a.list().size(); ++i) {
        if (!Equal(a.list()[i], b.list()[i])) return false;
      }
      return true;
    }
    case ValueKind::kDict: {
      if (a.dict().size() != b.dict().size()) return false;
      for (const auto& [k, v] : a.dict()) {
        const Value* other = b.Find(k);
        if (other == nullptr || !Equal(v, *other)) return false;
      }
      return true;
    }
    case ValueKind::kNamespace:
      return &a.dict() == &b.dict();  // identity, as Python objects without __eq__
    default:
      return false;
  }
}

}  // namespace clover::tokenizer::jinja
