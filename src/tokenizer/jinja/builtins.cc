// Filters, tests and methods with Jinja2 / Python semantics.
#include "tokenizer/jinja/builtins.h"

#include <cmath>
#include <cstdlib>
#include <set>

#include "tokenizer/jinja/py_string.h"
#include "tokenizer/jinja/python_format.h"
#include "tokenizer/utf8.h"

namespace clover::tokenizer::jinja {
namespace {

Status TypeError(const std::string& message) { return InvalidArgument("TypeError: " + message); }

// Returns keyword `name`, else positional `index`, else nullptr.
const Value* Arg(const ValueList& args, const Kwargs& kwargs, size_t index, const char* name) {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  return index < args.size() ? &args[index] : nullptr;
}

Result<std::string> StringArg(const Value* v, const char* what) {
  if (v == nullptr || !v->is_string()) {
    return TypeError(std::string(what) + " must be str, not " + (v ? v->TypeName() : "missing"));
  }
  return v->str();
}

std::optional<std::string> OptionalChars(const Value* v) {
  if (v == nullptr || v->is_none() || v->is_undefined()) return std::nullopt;
  return PyStr(*v);
}

Result<Value> ToJson(const Value& value, const ValueList& args, const Kwargs& kwargs) {
  // transformers' override: tojson(x, ensure_ascii=False, indent=None, separators=None,
  // sort_keys=False) -> json.dumps(...).
  JsonDumpsOptions o;
  if (const Value* a = Arg(args, kwargs, 0, "ensure_ascii")) o.ensure_ascii = a->Truthy();
  if (const Value* indent = Arg(args, kwargs, 1, "indent"); indent && !indent->is_none()) {
    if (indent->kind() == ValueKind::kInt) {
      o.indent = std::string(static_cast<size_t>(std::max<Int>(0, std::min<Int>(indent->int_value(), 64))), ' ');
    } else if (indent->is_string()) {
      o.indent = indent->str();
    } else {
      return TypeError("tojson indent must be int or str, not " + std::string(indent->TypeName()));
    }
    o.item_separator = ",";
  }
  if (const Value* sep = Arg(args, kwargs, 2, "separators"); sep && !sep->is_none()) {
    if (!sep->is_list() || sep->list().size() != 2 || !sep->list()[0].is_string() ||
        !sep->list()[1].is_string()) {
      return TypeError("tojson separators must be a (item, key) pair of strings");
    }
    o.item_separator = sep->list()[0].str();
    o.key_separator = sep->list()[1].str();
  }
  if (const Value* s = Arg(args, kwargs, 3, "sort_keys")) o.sort_keys = s->Truthy();
  CLOVER_ASSIGN_OR_RETURN(std::string text, JsonDumps(value, o));
  return Value::String(std::move(text));
}

Result<Value> Items(const Value& value) {
  if (value.is_undefined()) return Value::List({});
  if (!value.is_dict()) return TypeError("Can only get item pairs from a mapping.");
  ValueList out;
  for (const auto& [k, v] : value.dict()) out.push_back(Value::List({Value::String(k), v}));
  return Value::List(std::move(out));
}

Result<Value> Index(const Value& v, bool first) {
  CLOVER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
  if (items.empty()) return Value::Undefined("No first item, sequence was empty.");
  return first ? items.front() : items.back();
}

Result<Value> ToInt(const Value& v, const Value* def) {
  const Value fallback = def ? *def : Value::Integer(0);
  switch (v.kind()) {
    case ValueKind::kInt:
      return v;
    case ValueKind::kBool:
      return Value::Integer(v.bool_value());
    case ValueKind::kFloat:
      return std::isfinite(v.float_value()) ? Value::Integer(static_cast<Int>(v.float_value())) : fallback;
    case ValueKind::kString: {
      char* end = nullptr;
      const std::string s = PyStrip(v.str(), std::nullopt, true, true);
      const long long i = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && end && *end == '\0') return Value::Integer(i);
      const double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && end && *end == '\0' && std::isfinite(d)) return Value::Integer(static_cast<Int>(d));
      return fallback;
    }
    default:
      return fallback;
  }
}

Result<Value> ToFloat(const Value& v, const Value* def) {
  const Value fallback = def ? *def : Value::Float(0);
  if (v.is_number()) return Value::Float(v.AsDouble());
  if (v.is_string()) {
    char* end = nullptr;
    const std::string s = PyStrip(v.str(), std::nullopt, true, true);
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0') return Value::Float(d);
  }
  return fallback;
}

Result<Value> Reverse(const Value& v) {
  if (v.is_string()) {
    std::u32string cps = ToCodePoints(v.str());
    return Value::String(FromCodePoints(std::u32string(cps.rbegin(), cps.rend())));
  }
  CLOVER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
  return Value::List(ValueList(items.rbegin(), items.rend()));
}

std::string Capitalize(const std::string& s) {
  std::u32string cps = ToCodePoints(PyCase(s, false));
  if (!cps.empty()) cps[0] = ToCodePoints(PyCase(FromCodePoints(cps.substr(0, 1)), true))[0];
  return FromCodePoints(cps);
}

std::string Title(const std::string& s) {
  std::u32string cps = ToCodePoints(s);
  bool start = true;
  for (char32_t& c : cps) {
    const std::string one = FromCodePoints(std::u32string(1, c));
    const std::string mapped = PyCase(one, start);
    c = ToCodePoints(mapped)[0];
    const bool letter = PyCase(one, true) != PyCase(one, false);
    start = !letter;
  }
  return FromCodePoints(cps);
}

Result<Value> Replace(const std::string& s, const ValueList& args, const Kwargs& kwargs) {
  CLOVER_ASSIGN_OR_RETURN(std::string from, StringArg(Arg(args, kwargs, 0, "old"), "replace() old"));
  CLOVER_ASSIGN_OR_RETURN(std::string to, StringArg(Arg(args, kwargs, 1, "new"), "replace() new"));
  const Value* count_arg = Arg(args, kwargs, 2, "count");
  long count = count_arg && count_arg->kind() == ValueKind::kInt ? static_cast<long>(count_arg->int_value()) : -1;
  if (from.empty()) return Value::String(s);  // Python inserts between code points; no template needs it
  std::string out;
  size_t start = 0;
  while (count != 0) {
    const size_t at = s.find(from, start);
    if (at == std::string::npos) break;
    out.append(s, start, at - start).append(to);
    start = at + from.size();
    if (count > 0) --count;
  }
  out.append(s, start);
  return Value::String(std::move(out));
}

const std::set<std::string>& FilterNames() {
  static const std::set<std::string> names = {
      "length", "count", "string", "trim", "tojson", "safe", "items", "join", "default", "d",
      "first", "last", "list", "lower", "upper", "capitalize", "title", "replace", "int",
      "float", "abs", "reverse"};
  return names;
}

const std::set<std::string>& TestNames() {
  static const std::set<std::string> names = {
      "defined", "undefined", "none", "string", "number", "integer", "float", "boolean",
      "mapping", "iterable", "sequence", "true", "false", "callable", "eq", "equalto", "==",
      "ne", "!=", "lt", "<", "le", "<=", "gt", ">", "ge", ">=", "in", "odd", "even",
      "divisibleby", "lower", "upper", "sameas"};
  return names;
}

}  // namespace

bool IsKnownFilter(const std::string& name) { return FilterNames().count(name) > 0; }
bool IsKnownTest(const std::string& name) { return TestNames().count(name) > 0; }

Result<ValueList> Iterate(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return ValueList{};
    case ValueKind::kList:
      return v.list();
    case ValueKind::kDict: {
      ValueList keys;
      for (const auto& [k, e] : v.dict()) keys.push_back(Value::String(k));
      return keys;
    }
    case ValueKind::kString: {
      ValueList chars;
      for (char32_t c : ToCodePoints(v.str())) chars.push_back(Value::String(FromCodePoints(std::u32string(1, c))));
      return chars;
    }
    default:
      return TypeError("'" + std::string(v.TypeName()) + "' object is not iterable");
  }
}

Result<Int> Length(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return Int{0};
    case ValueKind::kString:
      return static_cast<Int>(CountCodePoints(v.str()));
    case ValueKind::kList:
      return static_cast<Int>(v.list().size());
    case ValueKind::kDict:
      return static_cast<Int>(v.dict().size());
    default:
      return TypeError("object of type '" + std::string(v.TypeName()) + "' has no len()");
  }
}

Result<Value> ApplyFilter(const std::string& name, const Value& value, const ValueList& args,
                          const Kwargs& kwargs) {
  if (name == "length" || name == "count") {
    CLOVER_ASSIGN_OR_RETURN(Int n, Length(value));
    return Value::Integer(n);
  }
  if (name == "string") return value.is_string() ? value : Value::String(PyStr(value));
  if (name == "safe") return value.is_string() ? value : Value::String(PyStr(value));
  if (name == "trim") {
    return Value::String(PyStrip(PyStr(value), OptionalChars(Arg(args, kwargs, 0, "chars")), true, true));
  }
  if (name == "tojson") return ToJson(value, args, kwargs);
  if (name == "items") return Items(value);
  if (name == "join") {
    const Value* sep = Arg(args, kwargs, 0, "d");
    const std::string glue = sep ? PyStr(*sep) : "";
    CLOVER_ASSIGN_OR_RETURN(ValueList items, Iterate(value));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += glue;
      out += PyStr(items[i]);
    }
    return Value::String(std::move(out));
  }
  if (name == "default" || name == "d") {
    const Value* def = Arg(args, kwargs, 0, "default_value");
    const Value* boolean = Arg(args, kwargs, 1, "boolean");
    const bool use_default = value.is_undefined() || (boolean && boolean->Truthy() && !value.Truthy());
    if (!use_default) return value;
    return def ? *def : Value::String("");
  }
  if (name == "first" || name == "last") return Index(value, name == "first");
  if (name == "list") {
    CLOVER_ASSIGN_OR_RETURN(ValueList items, Iterate(value));
    return Value::List(std::move(items));
  }
  if (name == "lower" || name == "upper") return Value::String(PyCase(PyStr(value), name == "upper"));
  if (name == "capitalize") return Value::String(Capitalize(PyStr(value)));
  if (name == "title") return Value::String(Title(PyStr(value)));
  if (name == "replace") return Replace(PyStr(value), args, kwargs);
  if (name == "int") return ToInt(value, Arg(args, kwargs, 0, "default"));
  if (name == "float") return ToFloat(value, Arg(args, kwargs, 0, "default"));
  if (name == "abs") {
    if (value.kind() == ValueKind::kInt) return Value::Integer(value.int_value() < 0 ? -value.int_value() : value.int_value());
    if (value.kind() == ValueKind::kBool) return Value::Integer(value.bool_value());
    if (value.kind() == ValueKind::kFloat) return Value::Float(std::fabs(value.float_value()));
    return TypeError("bad operand type for abs(): '" + std::string(value.TypeName()) + "'");
  }
  if (name == "reverse") return Reverse(value);
  return Unimplemented("filter '" + name + "'");
}

Result<bool> ApplyTest(const std::string& name, const Value& v, const ValueList& args) {
  const ValueKind k = v.kind();
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return k == ValueKind::kInt;
  if (name == "float") return k == ValueKind::kFloat;
  if (name == "boolean") return k == ValueKind::kBool;
  if (name == "true") return k == ValueKind::kBool && v.bool_value();
  if (name == "false") return k == ValueKind::kBool && !v.bool_value();
  if (name == "mapping") return k == ValueKind::kDict;
  // Jinja2's Undefined defines __iter__, so it passes `iterable`.
  if (name == "iterable") return k == ValueKind::kList || k == ValueKind::kDict || k == ValueKind::kString || k == ValueKind::kUndefined;
  if (name == "sequence") return k == ValueKind::kList || k == ValueKind::kDict || k == ValueKind::kString;
  if (name == "callable") return k == ValueKind::kFunction;
  if (name == "lower" || name == "upper") {
    return v.is_string() && PyCase(v.str(), name == "upper") == v.str();
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (k != ValueKind::kInt) return TypeError("test '" + name + "' needs an int, not " + v.TypeName());
    Int d = 2;
    if (name == "divisibleby") {
      if (args.empty() || args[0].kind() != ValueKind::kInt || args[0].int_value() == 0) {
        return TypeError("divisibleby needs a non-zero int argument");
      }
      d = args[0].int_value();
    }
    const Int r = v.int_value() % d;
    return name == "odd" ? r != 0 : r == 0;
  }
  if (args.empty()) return TypeError("test '" + name + "' needs an argument");
  const Value& o = args[0];
  if (name == "eq" || name == "equalto" || name == "==") return Equal(v, o);
  if (name == "ne" || name == "!=") return !Equal(v, o);
  if (name == "sameas") return Equal(v, o) && v.kind() == o.kind();
  if (name == "in") {
    if (o.is_string() && v.is_string()) return o.str().find(v.str()) != std::string::npos;
    CLOVER_ASSIGN_OR_RETURN(ValueList items, Iterate(o));
    for (const Value& e : items) {
      if (Equal(e, v)) return true;
    }
    return false;
  }
  if (!v.is_number() || !o.is_number()) {
    return TypeError("'" + name + "' not supported between instances of '" + v.TypeName() +
                     "' and '" + o.TypeName() + "'");
  }
  const double a = v.AsDouble(), b = o.AsDouble();
  if (name == "lt" || name == "<") return a < b;
  if (name == "le" || name == "<=") return a <= b;
  if (name == "gt" || name == ">") return a > b;
  return a >= b;
}

Result<Value> CallMethod(const Value& object, const std::string& name, const ValueList& args,
                         const Kwargs& kwargs, bool* found) {
  *found = true;
  if (object.is_string()) {
    const std::string& s = object.str();
    if (name == "startswith" || name == "endswith") {
      const Value* p = Arg(args, kwargs, 0, "prefix");
      if (p == nullptr) return TypeError(name + "() takes at least 1 argument (0 given)");
      ValueList options = p->is_list() ? p->list() : ValueList{*p};
      for (const Value& o : options) {
        if (!o.is_string()) {
          return TypeError(name + " first arg must be str or a tuple of str, not " + o.TypeName());
        }
        const std::string& x = o.str();
        const bool hit = name == "startswith" ? s.compare(0, x.size(), x) == 0
                                               : s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
        if (hit) return Value::Bool(true);
      }
      return Value::Bool(false);
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      return Value::String(PyStrip(s, OptionalChars(Arg(args, kwargs, 0, "chars")), name != "rstrip", name != "lstrip"));
    }
    if (name == "split") {
      const Value* sep = Arg(args, kwargs, 0, "sep");
      const Value* maxsplit = Arg(args, kwargs, 1, "maxsplit");
      std::optional<std::string> sep_text;
      if (sep && !sep->is_none()) {
        if (!sep->is_string()) return TypeError(std::string("must be str or None, not ") + sep->TypeName());
        if (sep->str().empty()) return InvalidArgument("ValueError: empty separator");
        sep_text = sep->str();
      }
      const long max = maxsplit && maxsplit->kind() == ValueKind::kInt ? static_cast<long>(maxsplit->int_value()) : -1;
      ValueList parts;
      for (std::string& p : PySplit(s, sep_text, max)) parts.push_back(Value::String(std::move(p)));
      return Value::List(std::move(parts));
    }
    if (name == "upper" || name == "lower") return Value::String(PyCase(s, name == "upper"));
    if (name == "capitalize") return Value::String(Capitalize(s));
    if (name == "title") return Value::String(Title(s));
    if (name == "replace") return Replace(s, args, kwargs);
    if (name == "find" || name == "count") {
      CLOVER_ASSIGN_OR_RETURN(std::string sub, StringArg(Arg(args, kwargs, 0, "sub"), name.c_str()));
      if (name == "find") {
        const size_t at = s.find(sub);
        return Value::Integer(at == std::string::npos ? -1 : static_cast<Int>(CountCodePoints(std::string_view(s).substr(0, at))));
      }
      if (sub.empty()) return Value::Integer(static_cast<Int>(CountCodePoints(s)) + 1);
      Int n = 0;
      for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
      return Value::Integer(n);
    }
    if (name == "join") {
      if (args.empty()) return TypeError("join() takes exactly one argument (0 given)");
      CLOVER_ASSIGN_OR_RETURN(ValueList items, Iterate(args[0]));
      std::string out;
      for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].is_string()) {
          return TypeError("sequence item " + std::to_string(i) + ": expected str instance, " + items[i].TypeName() + " found");
        }
        if (i > 0) out += s;
        out += items[i].str();
      }
      return Value::String(std::move(out));
    }
    if (name == "isdigit" || name == "isalpha" || name == "isspace") {
      const std::u32string cps = ToCodePoints(s);
      if (cps.empty()) return Value::Bool(false);
      for (char32_t c : cps) {
        const bool ok = name == "isspace" ? IsPyWhitespace(c)
                        : name == "isdigit" ? (c >= '0' && c <= '9')
                                            : PyCase(FromCodePoints(std::u32string(1, c)), true) != PyCase(FromCodePoints(std::u32string(1, c)), false);
        if (!ok) return Value::Bool(false);
      }
      return Value::Bool(true);
    }
  } else if (object.is_dict()) {
    if (name == "items") return Items(object);
    if (name == "keys") return Iterate(object).ok() ? Value::List(*Iterate(object)) : Value::List({});
    if (name == "values") {
      ValueList values;
      for (const auto& [k, v] : object.dict()) values.push_back(v);
      return Value::List(std::move(values));
    }
    if (name == "get") {
      const Value* key = Arg(args, kwargs, 0, "key");
      const Value* def = Arg(args, kwargs, 1, "default");
      if (key && key->is_string()) {
        if (const Value* v = object.Find(key->str())) return *v;
      }
      return def ? *def : Value::None();
    }
  }
  *found = false;
  return Value::None();
}

}  // namespace clover::tokenizer::jinja
