// Jinja tree-walking evaluator.
#include "tokenizer/jinja/evaluator.h"

#include <cmath>
#include <ctime>
#include <unordered_map>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/py_string.h"
#include "tokenizer/jinja/python_format.h"

namespace clover::tokenizer::jinja {
namespace {

struct Frame {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Frame> parent;
};

enum class Flow { kNormal, kBreak, kContinue };

const Int kIntMin = static_cast<Int>(static_cast<unsigned __int128>(1) << 127);

Status TypeError(const std::string& m) { return InvalidArgument("TypeError: " + m); }
Status UndefinedError(const std::string& m) { return InvalidArgument("UndefinedError: " + m); }

std::string ObjectRepr(const Value& v) {
  if (v.is_none()) return "'None'";
  std::string out = "'";
  out.append(v.TypeName()).append(" object'");
  return out;
}

bool ContainsNamespace(const Value& v) {
  if (v.kind() == ValueKind::kNamespace) return true;
  if (v.is_list()) {
    for (const Value& e : v.list()) {
      if (ContainsNamespace(e)) return true;
    }
  }
  if (v.is_dict()) {
    for (const auto& [k, e] : v.dict()) {
      if (ContainsNamespace(e)) return true;
    }
  }
  return false;
}

class Evaluator {
 public:
  Evaluator(const std::string& name, const RenderLimits& limits) : name_(name), limits_(limits) {}

  Result<std::string> Run(const std::vector<NodePtr>& body, const ValueDict& globals) {
    auto root = std::make_shared<Frame>();
    AddBuiltins(root.get());
    for (const auto& [k, v] : globals) root->vars[k] = v;
    cur_ = root;
    std::string out;
    CLOVER_ASSIGN_OR_RETURN(Flow flow, ExecBody(body, &out));
    (void)flow;
    return out;
  }

 private:
  Status At(const Node& n, const Status& s) const {
    if (s.ok() || s.message().rfind("template ", 0) == 0) return s;
    return Status(s.code(), "template " + name_ + ":" + std::to_string(n.line) + ":" +
                                std::to_string(n.column) + ": " + s.message());
  }
  Status Step(const Node& n) {
    if (++steps_ > limits_.max_steps) {
      return At(n, ResourceExhausted("render exceeded " + std::to_string(limits_.max_steps) + " steps"));
    }
    return Status::Ok();
  }
  Status Append(const Node& n, const std::string& text, std::string* out) const {
    if (out->size() + text.size() > limits_.max_output_bytes) {
      return At(n, ResourceExhausted("output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes"));
    }
    out->append(text);
    return Status::Ok();
  }

  void AddBuiltins(Frame* f) {
    f->vars["namespace"] = Value::Function("namespace", [](const ValueList& args, const Kwargs& kw) -> Result<Value> {
      ValueDict attrs;
      if (!args.empty()) {
        if (args.size() > 1 || !args[0].is_dict()) return TypeError("namespace() takes one mapping or keyword arguments");
        attrs = args[0].dict();
      }
      for (const auto& [k, v] : kw) {
        if (ContainsNamespace(v)) return Unimplemented("a namespace stored inside a namespace");
        attrs.emplace_back(k, v);
      }
      return Value::Namespace(std::move(attrs));
    });
    f->vars["dict"] = Value::Function("dict", [](const ValueList& args, const Kwargs& kw) -> Result<Value> {
      ValueDict items;
      if (!args.empty() && args[0].is_dict()) items = args[0].dict();
      for (const auto& [k, v] : kw) items.emplace_back(k, v);
      return Value::Dict(std::move(items));
    });
    f->vars["raise_exception"] = Value::Function("raise_exception", [](const ValueList& args, const Kwargs&) -> Result<Value> {
      return InvalidArgument("TemplateError: " + (args.empty() ? std::string() : PyStr(args[0])));
    });
    f->vars["strftime_now"] = Value::Function("strftime_now", [](const ValueList& args, const Kwargs&) -> Result<Value> {
      if (args.empty() || !args[0].is_string()) return TypeError("strftime_now() needs a format string");
      const std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[256];
      const size_t n = std::strftime(buf, sizeof(buf), args[0].str().c_str(), &tm);
      return Value::String(std::string(buf, n));
    });
    const size_t max_sequence = limits_.max_sequence;
    f->vars["range"] = Value::Function("range", [max_sequence](const ValueList& args, const Kwargs&) -> Result<Value> {
      Int start = 0, stop = 0, step = 1;
      for (const Value& a : args) {
        if (a.kind() != ValueKind::kInt) return TypeError(std::string("'") + a.TypeName() + "' object cannot be interpreted as an integer");
      }
      if (args.size() == 1) {
        stop = args[0].int_value();
      } else if (args.size() == 2 || args.size() == 3) {
        start = args[0].int_value();
        stop = args[1].int_value();
        if (args.size() == 3) step = args[2].int_value();
      } else {
        return TypeError("range expected 1 to 3 arguments");
      }
      if (step == 0) return InvalidArgument("ValueError: range() arg 3 must not be zero");
      ValueList items;
      for (Int i = start; step > 0 ? i < stop : i > stop; i += step) {
        if (items.size() >= max_sequence) return ResourceExhausted("range() longer than " + std::to_string(max_sequence));
        items.push_back(Value::Integer(i));
      }
      return Value::List(std::move(items));
    });
  }

  const Value* Lookup(const std::string& name) const {
    for (const Frame* f = cur_.get(); f != nullptr; f = f->parent.get()) {
      auto it = f->vars.find(name);
      if (it != f->vars.end()) return &it->second;
    }
    return nullptr;
  }

  Result<Flow> ExecBody(const std::vector<NodePtr>& body, std::string* out) {
    for (const NodePtr& n : body) {
      CLOVER_ASSIGN_OR_RETURN(Flow flow, Exec(*n, out));
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

  Result<Flow> Exec(const Node& n, std::string* out) {
    CLOVER_TRY(Step(n));
    switch (n.kind) {
      case NodeKind::kText:
        CLOVER_TRY(Append(n, n.name, out));
        return Flow::kNormal;
      case NodeKind::kOutput: {
        CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0]));
        CLOVER_TRY(Append(n, PyStr(v), out));
        return Flow::kNormal;
      }
      case NodeKind::kIf: {
        CLOVER_ASSIGN_OR_RETURN(Value c, Eval(*n.args[0]));
        return ExecBody(c.Truthy() ? n.body : n.else_body, out);
      }
      case NodeKind::kFor:
        return ExecFor(n, out);
      case NodeKind::kSet: {
        CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0]));
        CLOVER_TRY(At(n, Assign(n, std::move(v))));
        return Flow::kNormal;
      }
      case NodeKind::kSetBlock: {
        std::string captured;
        CLOVER_ASSIGN_OR_RETURN(Flow flow, ExecBody(n.body, &captured));
        (void)flow;
        cur_->vars[n.names[0]] = Value::String(std::move(captured));
        return Flow::kNormal;
      }
      case NodeKind::kMacro:
        cur_->vars[n.name] = MakeMacro(n);
        return Flow::kNormal;
      case NodeKind::kBreak:
        return Flow::kBreak;
      case NodeKind::kContinue:
        return Flow::kContinue;
      default:
        return At(n, Internal("expression node used as a statement"));
    }
  }

  Status Assign(const Node& n, Value v) {
    if (n.attr) {
      const Value* target = Lookup(n.names[0]);
      if (target == nullptr || target->kind() != ValueKind::kNamespace) {
        return InvalidArgument("TemplateRuntimeError: cannot assign attribute on non-namespace object '" + n.names[0] + "'");
      }
      if (ContainsNamespace(v)) return Unimplemented("a namespace stored inside a namespace");
      for (auto& [k, e] : target->dict()) {
        if (k == n.names[1]) {
          e = std::move(v);
          return Status::Ok();
        }
      }
      target->dict().emplace_back(n.names[1], std::move(v));
      return Status::Ok();
    }
    if (n.names.size() == 1) {
      cur_->vars[n.names[0]] = std::move(v);
      return Status::Ok();
    }
    CLOVER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
    if (items.size() != n.names.size()) {
      return InvalidArgument("ValueError: expected " + std::to_string(n.names.size()) +
                             " values to unpack, got " + std::to_string(items.size()));
    }
    for (size_t i = 0; i < items.size(); ++i) cur_->vars[n.names[i]] = items[i];
    return Status::Ok();
  }

  Result<Flow> ExecFor(const Node& n, std::string* out) {
    CLOVER_ASSIGN_OR_RETURN(Value iterable, Eval(*n.args[0]));
    auto items_or = Iterate(iterable);
    if (!items_or.ok()) return At(n, items_or.status());
    ValueList items = std::move(items_or).value();
    std::shared_ptr<Frame> outer = cur_;
    if (n.args.size() > 1) {  // `for x in xs if cond`
      ValueList kept;
      for (const Value& item : items) {
        cur_ = std::make_shared<Frame>(Frame{{}, outer});
        Status s = At(n, BindTargets(n, item));
        if (s.ok()) {
          auto c = Eval(*n.args[1]);
          if (!c.ok()) s = c.status();
          else if (c->Truthy()) kept.push_back(item);
        }
        cur_ = outer;
        CLOVER_TRY(s);
      }
      items = std::move(kept);
    }
    if (items.empty()) return ExecBody(n.else_body, out);
    const Int length = static_cast<Int>(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      cur_ = std::make_shared<Frame>(Frame{{}, outer});
      ValueDict loop = {{"index", Value::Integer(static_cast<Int>(i) + 1)},
                        {"index0", Value::Integer(static_cast<Int>(i))},
                        {"revindex", Value::Integer(length - static_cast<Int>(i))},
                        {"revindex0", Value::Integer(length - static_cast<Int>(i) - 1)},
                        {"first", Value::Bool(i == 0)},
                        {"last", Value::Bool(i + 1 == items.size())},
                        {"length", Value::Integer(length)},
                        {"depth", Value::Integer(1)},
                        {"depth0", Value::Integer(0)}};
      if (i > 0) loop.emplace_back("previtem", items[i - 1]);
      if (i + 1 < items.size()) loop.emplace_back("nextitem", items[i + 1]);
      cur_->vars["loop"] = Value::Dict(std::move(loop));
      Status bound = At(n, BindTargets(n, items[i]));
      if (!bound.ok()) {
        cur_ = outer;
        return bound;
      }
      auto flow = ExecBody(n.body, out);
      cur_ = outer;
      if (!flow.ok()) return flow.status();
      if (*flow == Flow::kBreak) break;
    }
    return Flow::kNormal;
  }

  Status BindTargets(const Node& n, const Value& item) {
    if (n.names.size() == 1) {
      cur_->vars[n.names[0]] = item;
      return Status::Ok();
    }
    CLOVER_ASSIGN_OR_RETURN(ValueList parts, Iterate(item));
    if (parts.size() != n.names.size()) {
      return InvalidArgument("ValueError: expected " + std::to_string(n.names.size()) +
                             " values to unpack, got " + std::to_string(parts.size()));
    }
    for (size_t i = 0; i < parts.size(); ++i) cur_->vars[n.names[i]] = parts[i];
    return Status::Ok();
  }

  Value MakeMacro(const Node& n) {
    // A weak reference: the defining frame holds the macro, so a strong one would be a cycle.
    std::weak_ptr<Frame> home = cur_;
    const Node* node = &n;
    return Value::Function(n.name, [this, node, home](const ValueList& args, const Kwargs& kwargs) -> Result<Value> {
      auto parent = home.lock();
      if (!parent) return FailedPrecondition("macro '" + node->name + "' called after its scope ended");
      if (args.size() > node->names.size()) {
        return TypeError("macro '" + node->name + "' takes not more than " +
                         std::to_string(node->names.size()) + " argument(s)");
      }
      if (depth_ >= limits_.max_call_depth) {
        return ResourceExhausted("macro calls nest deeper than " + std::to_string(limits_.max_call_depth));
      }
      std::shared_ptr<Frame> saved = cur_;
      cur_ = std::make_shared<Frame>(Frame{{}, parent});
      ++depth_;
      Status status;
      for (size_t i = 0; i < node->names.size() && status.ok(); ++i) {
        const std::string& p = node->names[i];
        const Value* given = nullptr;
        for (const auto& [k, v] : kwargs) {
          if (k == p) given = &v;
        }
        if (i < args.size()) {
          cur_->vars[p] = args[i];
        } else if (given) {
          cur_->vars[p] = *given;
        } else if (node->args[i]) {
          auto def = Eval(*node->args[i]);
          if (def.ok()) cur_->vars[p] = *def;
          else status = def.status();
        } else {
          cur_->vars[p] = Value::Undefined("parameter '" + p + "' was not provided");
        }
      }
      for (const auto& [k, v] : kwargs) {
        bool known = false;
        for (const std::string& p : node->names) known = known || p == k;
        if (!known && status.ok()) status = TypeError("macro '" + node->name + "' takes no keyword argument '" + k + "'");
      }
      std::string out;
      if (status.ok()) {
        auto flow = ExecBody(node->body, &out);
        if (!flow.ok()) status = flow.status();
      }
      --depth_;
      cur_ = saved;
      if (!status.ok()) return status;
      return Value::String(std::move(out));
    });
  }

  Result<Value> Eval(const Node& n) {
    CLOVER_TRY(Step(n));
    auto r = EvalInner(n);
    if (!r.ok()) return At(n, r.status());
    return r;
  }

  Result<ValueList> EvalArgs(const Node& n, size_t first, Kwargs* kwargs) {
    ValueList args;
    for (size_t i = first; i < n.args.size(); ++i) {
      CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*n.args[i]));
      args.push_back(std::move(v));
    }
    for (const auto& [k, e] : n.kwargs) {
      CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*e));
      kwargs->emplace_back(k, std::move(v));
    }
    return args;
  }

  Result<Value> EvalInner(const Node& n) {
    switch (n.kind) {
      case NodeKind::kLiteral:
        return n.literal;
      case NodeKind::kName: {
        const Value* v = Lookup(n.name);
        return v ? *v : Value::Undefined("'" + n.name + "' is undefined");
      }
      case NodeKind::kGetAttr: {
        CLOVER_ASSIGN_OR_RETURN(Value obj, Eval(*n.args[0]));
        return GetAttr(obj, n.name);
      }
      case NodeKind::kGetItem: {
        CLOVER_ASSIGN_OR_RETURN(Value obj, Eval(*n.args[0]));
        CLOVER_ASSIGN_OR_RETURN(Value key, Eval(*n.args[1]));
        return GetItem(obj, key);
      }
      case NodeKind::kSlice:
        return EvalSlice(n);
      case NodeKind::kCall:
        return EvalCall(n);
      case NodeKind::kFilter: {
        CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0]));
        Kwargs kwargs;
        CLOVER_ASSIGN_OR_RETURN(ValueList args, EvalArgs(n, 1, &kwargs));
        return ApplyFilter(n.name, v, args, kwargs);
      }
      case NodeKind::kTest: {
        CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0]));
        Kwargs kwargs;
        CLOVER_ASSIGN_OR_RETURN(ValueList args, EvalArgs(n, 1, &kwargs));
        CLOVER_ASSIGN_OR_RETURN(bool b, ApplyTest(n.name, v, args));
        return Value::Bool(b != n.negated);
      }
      case NodeKind::kUnary: {
        CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0]));
        if (n.name == "not") return Value::Bool(!v.Truthy());
        if (v.is_undefined()) return UndefinedError(v.hint());
        if (v.kind() == ValueKind::kFloat) return Value::Float(n.name == "-" ? -v.float_value() : v.float_value());
        if (v.kind() == ValueKind::kInt || v.kind() == ValueKind::kBool) {
          const Int i = v.kind() == ValueKind::kBool ? v.bool_value() : v.int_value();
          return Value::Integer(n.name == "-" ? -i : i);
        }
        return TypeError("bad operand type for unary " + n.name + ": '" + v.TypeName() + "'");
      }
      case NodeKind::kBinary:
        return EvalBinary(n);
      case NodeKind::kCondExpr: {
        CLOVER_ASSIGN_OR_RETURN(Value c, Eval(*n.args[1]));
        if (c.Truthy()) return Eval(*n.args[0]);
        if (n.args[2]) return Eval(*n.args[2]);
        return Value::Undefined("the inline if-expression evaluated to false and no else section was defined");
      }
      case NodeKind::kList:
      case NodeKind::kTuple: {
        Kwargs unused;
        CLOVER_ASSIGN_OR_RETURN(ValueList items, EvalArgs(n, 0, &unused));
        return Value::List(std::move(items));
      }
      case NodeKind::kDict: {
        ValueDict items;
        for (size_t i = 0; i + 1 < n.args.size(); i += 2) {
          CLOVER_ASSIGN_OR_RETURN(Value k, Eval(*n.args[i]));
          CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*n.args[i + 1]));
          if (!k.is_string()) return Unimplemented(std::string("dict literal keys of type ") + k.TypeName());
          bool replaced = false;
          for (auto& [ek, ev] : items) {
            if (ek == k.str()) {
              ev = v;
              replaced = true;
            }
          }
          if (!replaced) items.emplace_back(k.str(), std::move(v));
        }
        return Value::Dict(std::move(items));
      }
      default:
        return Internal("statement node used as an expression");
    }
  }

  Result<Value> GetAttr(const Value& obj, const std::string& name) {
    if (obj.is_undefined()) return UndefinedError(obj.hint());
    if (obj.is_dict() || obj.kind() == ValueKind::kNamespace) {
      if (const Value* v = obj.Find(name)) return *v;
    }
    return Value::Undefined(ObjectRepr(obj) + " has no attribute '" + name + "'");
  }

  Result<Value> GetItem(const Value& obj, const Value& key) {
    if (obj.is_undefined()) return UndefinedError(obj.hint());
    if (key.is_string()) {
      if (obj.is_dict() || obj.kind() == ValueKind::kNamespace) {
        if (const Value* v = obj.Find(key.str())) return *v;
      }
      return Value::Undefined(ObjectRepr(obj) + " has no attribute '" + key.str() + "'");
    }
    if ((key.kind() == ValueKind::kInt || key.kind() == ValueKind::kBool) && (obj.is_list() || obj.is_string())) {
      const Int i = key.kind() == ValueKind::kBool ? key.bool_value() : key.int_value();
      if (obj.is_list()) {
        const Int size = static_cast<Int>(obj.list().size());
        const Int at = i < 0 ? i + size : i;
        if (at >= 0 && at < size) return obj.list()[static_cast<size_t>(at)];
      } else {
        const std::u32string cps = ToCodePoints(obj.str());
        const Int size = static_cast<Int>(cps.size());
        const Int at = i < 0 ? i + size : i;
        if (at >= 0 && at < size) return Value::String(FromCodePoints(cps.substr(static_cast<size_t>(at), 1)));
      }
    }
    return Value::Undefined(std::string(obj.is_none() ? "None" : std::string(obj.TypeName()) + " object") +
                            " has no element " + PyRepr(key));
  }

  Result<Value> EvalSlice(const Node& n) {
    CLOVER_ASSIGN_OR_RETURN(Value obj, Eval(*n.args[0]));
    Int bounds[3] = {0, 0, 1};
    bool given[3] = {false, false, false};
    for (int i = 0; i < 3; ++i) {
      if (!n.args[i + 1]) continue;
      CLOVER_ASSIGN_OR_RETURN(Value v, Eval(*n.args[i + 1]));
      if (v.is_none()) continue;
      if (v.kind() != ValueKind::kInt) return TypeError("slice indices must be integers or None");
      bounds[i] = v.int_value();
      given[i] = true;
    }
    const Int step = given[2] ? bounds[2] : 1;
    if (step == 0) return InvalidArgument("ValueError: slice step cannot be zero");
    std::u32string cps;
    Int size;
    if (obj.is_list()) {
      size = static_cast<Int>(obj.list().size());
    } else if (obj.is_string()) {
      cps = ToCodePoints(obj.str());
      size = static_cast<Int>(cps.size());
    } else if (obj.is_undefined()) {
      return UndefinedError(obj.hint());
    } else {
      return TypeError("'" + std::string(obj.TypeName()) + "' object is not subscriptable");
    }
    // Python's slice.indices().
    auto clamp = [&](Int v, bool has, Int def_pos, Int def_neg) -> Int {
      if (!has) return step > 0 ? def_pos : def_neg;
      if (v < 0) v += size;
      if (step > 0) return v < 0 ? 0 : (v > size ? size : v);
      return v < 0 ? -1 : (v >= size ? size - 1 : v);
    };
    const Int start = clamp(bounds[0], given[0], 0, size - 1);
    const Int stop = clamp(bounds[1], given[1], size, -1);
    ValueList items;
    std::u32string sub;
    for (Int i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (obj.is_list()) items.push_back(obj.list()[static_cast<size_t>(i)]);
      else sub.push_back(cps[static_cast<size_t>(i)]);
    }
    if (obj.is_list()) return Value::List(std::move(items));
    return Value::String(FromCodePoints(sub));
  }

  Result<Value> EvalCall(const Node& n) {
    const Node& callee = *n.args[0];
    Kwargs kwargs;
    if (callee.kind == NodeKind::kGetAttr) {
      CLOVER_ASSIGN_OR_RETURN(Value obj, Eval(*callee.args[0]));
      if (obj.is_undefined()) return UndefinedError(obj.hint());
      CLOVER_ASSIGN_OR_RETURN(ValueList args, EvalArgs(n, 1, &kwargs));
      bool found = false;
      CLOVER_ASSIGN_OR_RETURN(Value r, CallMethod(obj, callee.name, args, kwargs, &found));
      if (found) return r;
      CLOVER_ASSIGN_OR_RETURN(Value f, GetAttr(obj, callee.name));
      return CallValue(f, args, kwargs);
    }
    CLOVER_ASSIGN_OR_RETURN(Value f, Eval(callee));
    CLOVER_ASSIGN_OR_RETURN(ValueList args, EvalArgs(n, 1, &kwargs));
    return CallValue(f, args, kwargs);
  }

  Result<Value> CallValue(const Value& f, const ValueList& args, const Kwargs& kwargs) {
    if (f.is_undefined()) return UndefinedError(f.hint());
    if (f.kind() != ValueKind::kFunction) {
      std::string message = "'";
      message.append(f.TypeName()).append("' object is not callable");
      return TypeError(message);
    }
    return f.function()(args, kwargs);
  }

  Result<Value> EvalBinary(const Node& n) {
    const std::string& op = n.name;
    CLOVER_ASSIGN_OR_RETURN(Value a, Eval(*n.args[0]));
    if (op == "and") return a.Truthy() ? Eval(*n.args[1]) : a;
    if (op == "or") return a.Truthy() ? a : Eval(*n.args[1]);
    CLOVER_ASSIGN_OR_RETURN(Value b, Eval(*n.args[1]));
    if (op == "~") {
      std::string s = PyStr(a) + PyStr(b);
      if (s.size() > limits_.max_output_bytes) return ResourceExhausted("string longer than the output limit");
      return Value::String(std::move(s));
    }
    if (op == "==") return Value::Bool(Equal(a, b));
    if (op == "!=") return Value::Bool(!Equal(a, b));
    if (op == "in" || op == "not in") {
      CLOVER_ASSIGN_OR_RETURN(bool in, Contains(b, a));
      return Value::Bool(in == (op == "in"));
    }
    if (a.is_undefined()) return UndefinedError(a.hint());
    if (b.is_undefined()) return UndefinedError(b.hint());
    if (op == "<" || op == "<=" || op == ">" || op == ">=") return Compare(op, a, b);
    return Arithmetic(op, a, b);
  }

  Result<bool> Contains(const Value& container, const Value& item) {
    switch (container.kind()) {
      case ValueKind::kString:
        if (!item.is_string()) return TypeError("'in <string>' requires string as left operand, not " + std::string(item.TypeName()));
        return container.str().find(item.str()) != std::string::npos;
      case ValueKind::kList:
        for (const Value& e : container.list()) {
          if (Equal(e, item)) return true;
        }
        return false;
      case ValueKind::kDict:
      case ValueKind::kNamespace:
        return item.is_string() && container.Find(item.str()) != nullptr;
      case ValueKind::kUndefined:
        return false;  // Undefined iterates as empty
      default:
        return TypeError("argument of type '" + std::string(container.TypeName()) + "' is not iterable");
    }
  }

  Result<Value> Compare(const std::string& op, const Value& a, const Value& b) {
    int c;
    if (a.is_number() && b.is_number()) {
      if (a.kind() == ValueKind::kFloat || b.kind() == ValueKind::kFloat) {
        const double x = a.AsDouble(), y = b.AsDouble();
        c = x < y ? -1 : x > y ? 1 : 0;
        if (std::isnan(x) || std::isnan(y)) return Value::Bool(false);
      } else {
        const Int x = a.kind() == ValueKind::kBool ? a.bool_value() : a.int_value();
        const Int y = b.kind() == ValueKind::kBool ? b.bool_value() : b.int_value();
        c = x < y ? -1 : x > y ? 1 : 0;
      }
    } else if (a.is_string() && b.is_string()) {
      c = a.str().compare(b.str());
    } else {
      return TypeError("'" + op + "' not supported between instances of '" + a.TypeName() + "' and '" + b.TypeName() + "'");
    }
    if (op == "<") return Value::Bool(c < 0);
    if (op == "<=") return Value::Bool(c <= 0);
    if (op == ">") return Value::Bool(c > 0);
    return Value::Bool(c >= 0);
  }

  Result<Value> Repeat(const Value& seq, Int times) {
    if (times <= 0) return seq.is_string() ? Value::String("") : Value::List({});
    const size_t unit = seq.is_string() ? seq.str().size() : seq.list().size();
    if (unit > 0 && static_cast<Int>(unit) * times > static_cast<Int>(limits_.max_output_bytes)) {
      return ResourceExhausted("repetition result too large");
    }
    if (seq.is_string()) {
      std::string s;
      for (Int i = 0; i < times && unit > 0; ++i) s += seq.str();
      return Value::String(std::move(s));
    }
    ValueList items;
    for (Int i = 0; i < times && unit > 0; ++i) items.insert(items.end(), seq.list().begin(), seq.list().end());
    return Value::List(std::move(items));
  }

  Result<Value> Arithmetic(const std::string& op, const Value& a, const Value& b) {
    if (op == "+" && a.is_string() && b.is_string()) {
      if (a.str().size() + b.str().size() > limits_.max_output_bytes) return ResourceExhausted("string longer than the output limit");
      return Value::String(a.str() + b.str());
    }
    if (op == "+" && a.is_list() && b.is_list()) {
      if (a.list().size() + b.list().size() > limits_.max_sequence) return ResourceExhausted("list too long");
      ValueList items = a.list();
      items.insert(items.end(), b.list().begin(), b.list().end());
      return Value::List(std::move(items));
    }
    if (op == "*" && (a.is_string() || a.is_list()) && (b.kind() == ValueKind::kInt || b.kind() == ValueKind::kBool)) {
      return Repeat(a, b.kind() == ValueKind::kBool ? b.bool_value() : b.int_value());
    }
    if (op == "*" && (b.is_string() || b.is_list()) && (a.kind() == ValueKind::kInt || a.kind() == ValueKind::kBool)) {
      return Repeat(b, a.kind() == ValueKind::kBool ? a.bool_value() : a.int_value());
    }
    if (!a.is_number() || !b.is_number()) {
      if (op == "+" && (a.is_string() || a.is_list())) {
        return TypeError(std::string("can only concatenate ") + a.TypeName() + " (not \"" + b.TypeName() + "\") to " + a.TypeName());
      }
      return TypeError("unsupported operand type(s) for " + op + ": '" + a.TypeName() + "' and '" + b.TypeName() + "'");
    }
    const bool floats = a.kind() == ValueKind::kFloat || b.kind() == ValueKind::kFloat || op == "/";
    if (floats) {
      const double x = a.AsDouble(), y = b.AsDouble();
      if (op == "+") return Value::Float(x + y);
      if (op == "-") return Value::Float(x - y);
      if (op == "*") return Value::Float(x * y);
      if (op == "**") return Value::Float(std::pow(x, y));
      if (y == 0) return InvalidArgument("ZeroDivisionError: float division by zero");
      if (op == "/") return Value::Float(x / y);
      if (op == "//") return Value::Float(std::floor(x / y));
      const double r = std::fmod(x, y);
      return Value::Float(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
    }
    const Int x = a.kind() == ValueKind::kBool ? a.bool_value() : a.int_value();
    const Int y = b.kind() == ValueKind::kBool ? b.bool_value() : b.int_value();
    Int r = 0;
    const Status overflow = InvalidArgument("OverflowError: integer result beyond 128 bits");
    if (op == "+") {
      if (__builtin_add_overflow(x, y, &r)) return overflow;
      return Value::Integer(r);
    }
    if (op == "-") {
      if (__builtin_sub_overflow(x, y, &r)) return overflow;
      return Value::Integer(r);
    }
    if (op == "*") {
      if (__builtin_mul_overflow(x, y, &r)) return overflow;
      return Value::Integer(r);
    }
    if (op == "**") {
      if (y < 0) return Value::Float(std::pow(static_cast<double>(x), static_cast<double>(y)));
      if (x == 0 || x == 1) return Value::Integer(y == 0 ? 1 : x);
      if (x == -1) return Value::Integer(y % 2 == 0 ? 1 : -1);
      r = 1;
      for (Int i = 0; i < y; ++i) {  // |x| >= 2, so this overflows within 127 rounds
        if (__builtin_mul_overflow(r, x, &r)) return overflow;
      }
      return Value::Integer(r);
    }
    if (y == 0) return InvalidArgument("ZeroDivisionError: integer division or modulo by zero");
    if (x == kIntMin && y == -1) return overflow;
    Int q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {
      q -= 1;
      m += y;
    }
    return Value::Integer(op == "//" ? q : m);
  }

  const std::string& name_;
  const RenderLimits& limits_;
  std::shared_ptr<Frame> cur_;
  uint64_t steps_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<std::string> Evaluate(const std::vector<NodePtr>& body, const ValueDict& globals,
                             const std::string& name, const RenderLimits& limits) {
  Evaluator e(name, limits);
  return e.Run(body, globals);
}

}  // namespace clover::tokenizer::jinja
