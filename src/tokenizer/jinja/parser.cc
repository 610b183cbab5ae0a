// Recursive-descent Jinja parser; the expression grammar follows Jinja2's precedence ladder
// (condexpr < or < and < not < compare < +,- < ~ < *,/,//,% < ** < unary < postfix/filters).
#include "tokenizer/jinja/parser.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "tokenizer/jinja/builtins.h"

namespace clover::tokenizer::jinja {
namespace {

// Nesting bound for statements and expressions: hostile templates get an error, not a stack
// overflow.
constexpr int kMaxNesting = 200;

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const std::string& name) : t_(tokens), name_(name) {}

  Result<std::vector<NodePtr>> Run() {
    std::vector<NodePtr> body;
    std::string end;
    CLOVER_TRY(ParseBody(&body, {}, &end));
    return body;
  }

 private:
  const Token& Cur() const { return t_[pos_]; }
  const Token& Next() const { return t_[pos_ + 1 < t_.size() ? pos_ + 1 : pos_]; }
  void Advance() {
    if (pos_ + 1 < t_.size()) ++pos_;
  }
  bool IsOp(const char* op) const { return Cur().kind == TokenKind::kOperator && Cur().text == op; }
  bool IsName(const char* n) const { return Cur().kind == TokenKind::kName && Cur().text == n; }

  Status ErrorAt(const Token& tok, StatusCode code, const std::string& what) const {
    return Status(code, "template " + name_ + ":" + std::to_string(tok.line) + ":" +
                            std::to_string(tok.column) + ": " + what);
  }
  Status Syntax(const std::string& what) const {
    return ErrorAt(Cur(), StatusCode::kInvalidArgument, "syntax error: " + what);
  }
  std::string Describe(const Token& tok) const {
    switch (tok.kind) {
      case TokenKind::kEnd: return "end of template";
      case TokenKind::kVarEnd: return "'}}'";
      case TokenKind::kBlockEnd: return "'%}'";
      case TokenKind::kText: return "template text";
      default: return "'" + tok.text + "'";
    }
  }
  Status Expect(TokenKind kind, const char* text, const char* what) {
    if (Cur().kind != kind || (text && Cur().text != text)) {
      return Syntax(std::string("expected ") + what + ", found " + Describe(Cur()));
    }
    Advance();
    return Status::Ok();
  }
  NodePtr Make(NodeKind kind, const Token& at) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->line = at.line;
    n->column = at.column;
    return n;
  }

  struct DepthGuard {
    explicit DepthGuard(int* d) : d_(d) { ++*d_; }
    ~DepthGuard() { --*d_; }
    int* d_;
  };
  // Records `n`'s height; long operator or postfix chains nest without parser recursion, so the
  // bound is checked here too (evaluation and destruction recurse over the tree).
  Status Grow(Node* n) const {
    for (const NodePtr& a : n->args) {
      if (a) n->height = std::max(n->height, a->height + 1);
    }
    if (n->height > kMaxNesting) {
      return Status(StatusCode::kResourceExhausted,
                    "template " + name_ + ":" + std::to_string(n->line) + ":" +
                        std::to_string(n->column) + ": expression nests deeper than " +
                        std::to_string(kMaxNesting) + " levels");
    }
    return Status::Ok();
  }
  Status CheckDepth() const {
    if (depth_ > kMaxNesting) {
      return ErrorAt(Cur(), StatusCode::kResourceExhausted,
                     "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    return Status::Ok();
  }

  // Parses statements until `{% <one of ends>` (its name consumed, returned in `found`).
  Status ParseBody(std::vector<NodePtr>* body, std::initializer_list<const char*> ends,
                   std::string* found) {
    DepthGuard guard(&depth_);
    CLOVER_TRY(CheckDepth());
    while (true) {
      const Token& tok = Cur();
      switch (tok.kind) {
        case TokenKind::kEnd:
          if (ends.size() == 0) return Status::Ok();
          return Syntax(std::string("missing '{% ") + *(ends.end() - 1) + " %}'");
        case TokenKind::kText: {
          auto n = Make(NodeKind::kText, tok);
          n->name = tok.text;
          body->push_back(std::move(n));
          Advance();
          break;
        }
        case TokenKind::kVarBegin: {
          auto n = Make(NodeKind::kOutput, tok);
          Advance();
          CLOVER_ASSIGN_OR_RETURN(NodePtr e, ParseExpression());
          n->args.push_back(std::move(e));
          CLOVER_TRY(Expect(TokenKind::kVarEnd, nullptr, "'}}'"));
          body->push_back(std::move(n));
          break;
        }
        case TokenKind::kBlockBegin: {
          Advance();
          if (Cur().kind != TokenKind::kName) return Syntax("expected a statement name");
          for (const char* e : ends) {
            if (Cur().text == e) {
              *found = e;
              Advance();
              return Status::Ok();
            }
          }
          CLOVER_ASSIGN_OR_RETURN(NodePtr s, ParseStatement());
          body->push_back(std::move(s));
          break;
        }
        default:
          return Syntax("unexpected " + Describe(tok));
      }
    }
  }

  Result<NodePtr> ParseStatement() {
    const Token& tok = Cur();
    const std::string& kw = tok.text;
    if (kw == "if") return ParseIf();
    if (kw == "for") return ParseFor();
    if (kw == "set") return ParseSet();
    if (kw == "macro") return ParseMacro();
    if (kw == "break" || kw == "continue") {
      if (loop_depth_ == 0) return Syntax("'" + kw + "' outside a for loop");
      auto n = Make(kw == "break" ? NodeKind::kBreak : NodeKind::kContinue, tok);
      Advance();
      CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
      return n;
    }
    static const char* kKnownUnsupported[] = {"include", "extends", "block", "import", "from",
                                              "call", "filter", "with", "raw", "autoescape",
                                              "do", "trans"};
    for (const char* u : kKnownUnsupported) {
      if (kw == u) {
        return ErrorAt(tok, StatusCode::kUnimplemented,
                       "unsupported construct '{% " + kw + " %}' (chat templates need none)");
      }
    }
    return Syntax("unknown statement '" + kw + "' (or a closing tag without its opening)");
  }

  Result<NodePtr> ParseIf() {
    auto n = Make(NodeKind::kIf, Cur());
    Advance();
    CLOVER_ASSIGN_OR_RETURN(NodePtr cond, ParseExpression());
    n->args.push_back(std::move(cond));
    CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
    std::string end;
    CLOVER_TRY(ParseBody(&n->body, {"elif", "else", "endif"}, &end));
    if (end == "elif") {
      pos_ -= 1;  // re-read `elif` as the `if` of a nested node
      CLOVER_ASSIGN_OR_RETURN(NodePtr nested, ParseIf());
      n->else_body.push_back(std::move(nested));
      return n;
    }
    if (end == "else") {
      CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
      CLOVER_TRY(ParseBody(&n->else_body, {"endif"}, &end));
    }
    CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
    return n;
  }

  Status ParseTargets(std::vector<std::string>* names) {
    const bool paren = IsOp("(");
    if (paren) Advance();
    while (true) {
      if (Cur().kind != TokenKind::kName) return Syntax("expected a variable name");
      names->push_back(Cur().text);
      Advance();
      if (!IsOp(",")) break;
      Advance();
    }
    if (paren) CLOVER_TRY(Expect(TokenKind::kOperator, ")", "')'"));
    return Status::Ok();
  }

  Result<NodePtr> ParseFor() {
    auto n = Make(NodeKind::kFor, Cur());
    Advance();
    CLOVER_TRY(ParseTargets(&n->names));
    CLOVER_TRY(Expect(TokenKind::kName, "in", "'in'"));
    CLOVER_ASSIGN_OR_RETURN(NodePtr iter, ParseOr());
    if (IsOp(",")) return Syntax("iterating over a bare tuple is not supported; use [...]");
    n->args.push_back(std::move(iter));
    if (IsName("if")) {
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr cond, ParseExpression());
      n->args.push_back(std::move(cond));
    }
    if (IsName("recursive")) {
      return ErrorAt(Cur(), StatusCode::kUnimplemented, "unsupported construct 'recursive' loop");
    }
    CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
    ++loop_depth_;
    std::string end;
    Status s = ParseBody(&n->body, {"else", "endfor"}, &end);
    --loop_depth_;
    CLOVER_TRY(s);
    if (end == "else") {
      CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
      CLOVER_TRY(ParseBody(&n->else_body, {"endfor"}, &end));
    }
    CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
    return n;
  }

  Result<NodePtr> ParseSet() {
    auto n = Make(NodeKind::kSet, Cur());
    Advance();
    if (Cur().kind == TokenKind::kName && Next().kind == TokenKind::kOperator && Next().text == ".") {
      n->attr = true;
      n->names.push_back(Cur().text);
      Advance();
      Advance();
      if (Cur().kind != TokenKind::kName) return Syntax("expected an attribute name after '.'");
      n->names.push_back(Cur().text);
      Advance();
    } else {
      CLOVER_TRY(ParseTargets(&n->names));
    }
    if (Cur().kind == TokenKind::kBlockEnd && !n->attr && n->names.size() == 1) {
      n->kind = NodeKind::kSetBlock;
      Advance();
      std::string end;
      CLOVER_TRY(ParseBody(&n->body, {"endset"}, &end));
      CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
      return n;
    }
    CLOVER_TRY(Expect(TokenKind::kOperator, "=", "'='"));
    CLOVER_ASSIGN_OR_RETURN(NodePtr value, ParseTupleOrExpression());
    n->args.push_back(std::move(value));
    CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
    return n;
  }

  Result<NodePtr> ParseMacro() {
    auto n = Make(NodeKind::kMacro, Cur());
    Advance();
    if (Cur().kind != TokenKind::kName) return Syntax("expected a macro name");
    n->name = Cur().text;
    Advance();
    CLOVER_TRY(Expect(TokenKind::kOperator, "(", "'('"));
    while (!IsOp(")")) {
      if (Cur().kind != TokenKind::kName) return Syntax("expected a parameter name");
      n->names.push_back(Cur().text);
      Advance();
      NodePtr def;
      if (IsOp("=")) {
        Advance();
        CLOVER_ASSIGN_OR_RETURN(def, ParseExpression());
      }
      n->args.push_back(std::move(def));
      if (!IsOp(",")) break;
      Advance();
    }
    CLOVER_TRY(Expect(TokenKind::kOperator, ")", "')'"));
    CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
    const int saved_loops = loop_depth_;
    loop_depth_ = 0;
    std::string end;
    Status s = ParseBody(&n->body, {"endmacro"}, &end);
    loop_depth_ = saved_loops;
    CLOVER_TRY(s);
    if (Cur().kind == TokenKind::kName) Advance();  // `{% endmacro name %}`
    CLOVER_TRY(Expect(TokenKind::kBlockEnd, nullptr, "'%}'"));
    return n;
  }

  // `a, b` without brackets makes a tuple (as in `{% set x = 1, 2 %}`).
  Result<NodePtr> ParseTupleOrExpression() {
    const Token& start = Cur();
    CLOVER_ASSIGN_OR_RETURN(NodePtr first, ParseExpression());
    if (!IsOp(",")) return first;
    auto t = Make(NodeKind::kTuple, start);
    t->args.push_back(std::move(first));
    while (IsOp(",")) {
      Advance();
      if (Cur().kind == TokenKind::kBlockEnd) break;
      CLOVER_ASSIGN_OR_RETURN(NodePtr e, ParseExpression());
      t->args.push_back(std::move(e));
    }
    return t;
  }

  Result<NodePtr> ParseExpression() {
    DepthGuard guard(&depth_);
    CLOVER_TRY(CheckDepth());
    const Token& start = Cur();
    CLOVER_ASSIGN_OR_RETURN(NodePtr value, ParseOr());
    while (IsName("if")) {
      Advance();
      auto n = Make(NodeKind::kCondExpr, start);
      CLOVER_ASSIGN_OR_RETURN(NodePtr cond, ParseOr());
      NodePtr otherwise;
      if (IsName("else")) {
        Advance();
        CLOVER_ASSIGN_OR_RETURN(otherwise, ParseExpression());
      }
      n->args.push_back(std::move(value));
      n->args.push_back(std::move(cond));
      n->args.push_back(std::move(otherwise));
      CLOVER_TRY(Grow(n.get()));
      value = std::move(n);
    }
    return value;
  }

  Result<NodePtr> Binary(const std::string& op, NodePtr a, NodePtr b, const Token& at) {
    auto n = Make(NodeKind::kBinary, at);
    n->name = op;
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(b));
    CLOVER_TRY(Grow(n.get()));
    return n;
  }

  Result<NodePtr> ParseOr() {
    CLOVER_ASSIGN_OR_RETURN(NodePtr a, ParseAnd());
    while (IsName("or")) {
      const Token& at = Cur();
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr b, ParseAnd());
      CLOVER_ASSIGN_OR_RETURN(a, Binary("or", std::move(a), std::move(b), at));
    }
    return a;
  }
  Result<NodePtr> ParseAnd() {
    CLOVER_ASSIGN_OR_RETURN(NodePtr a, ParseNot());
    while (IsName("and")) {
      const Token& at = Cur();
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr b, ParseNot());
      CLOVER_ASSIGN_OR_RETURN(a, Binary("and", std::move(a), std::move(b), at));
    }
    return a;
  }
  Result<NodePtr> ParseNot() {
    if (IsName("not")) {
      DepthGuard guard(&depth_);
      CLOVER_TRY(CheckDepth());
      auto n = Make(NodeKind::kUnary, Cur());
      n->name = "not";
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr e, ParseNot());
      n->args.push_back(std::move(e));
      CLOVER_TRY(Grow(n.get()));
      return n;
    }
    return ParseCompare();
  }
  Result<NodePtr> ParseCompare() {
    CLOVER_ASSIGN_OR_RETURN(NodePtr a, ParseMath1());
    while (true) {
      const Token& at = Cur();
      std::string op;
      if (at.kind == TokenKind::kOperator &&
          (at.text == "==" || at.text == "!=" || at.text == "<" || at.text == "<=" ||
           at.text == ">" || at.text == ">=")) {
        op = at.text;
        Advance();
      } else if (IsName("in")) {
        op = "in";
        Advance();
      } else if (IsName("not") && Next().kind == TokenKind::kName && Next().text == "in") {
        op = "not in";
        Advance();
        Advance();
      } else {
        return a;
      }
      CLOVER_ASSIGN_OR_RETURN(NodePtr b, ParseMath1());
      CLOVER_ASSIGN_OR_RETURN(a, Binary(op, std::move(a), std::move(b), at));
    }
  }
  Result<NodePtr> ParseMath1() {
    CLOVER_ASSIGN_OR_RETURN(NodePtr a, ParseConcat());
    while (IsOp("+") || IsOp("-")) {
      const Token& at = Cur();
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr b, ParseConcat());
      CLOVER_ASSIGN_OR_RETURN(a, Binary(at.text, std::move(a), std::move(b), at));
    }
    return a;
  }
  Result<NodePtr> ParseConcat() {
    CLOVER_ASSIGN_OR_RETURN(NodePtr a, ParseMath2());
    while (IsOp("~")) {
      const Token& at = Cur();
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr b, ParseMath2());
      CLOVER_ASSIGN_OR_RETURN(a, Binary("~", std::move(a), std::move(b), at));
    }
    return a;
  }
  Result<NodePtr> ParseMath2() {
    CLOVER_ASSIGN_OR_RETURN(NodePtr a, ParsePow());
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      const Token& at = Cur();
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr b, ParsePow());
      CLOVER_ASSIGN_OR_RETURN(a, Binary(at.text, std::move(a), std::move(b), at));
    }
    return a;
  }
  Result<NodePtr> ParsePow() {
    CLOVER_ASSIGN_OR_RETURN(NodePtr a, ParseUnary(true));
    while (IsOp("**")) {
      const Token& at = Cur();
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr b, ParseUnary(true));
      CLOVER_ASSIGN_OR_RETURN(a, Binary("**", std::move(a), std::move(b), at));
    }
    return a;
  }
  Result<NodePtr> ParseUnary(bool with_filter) {
    DepthGuard guard(&depth_);
    CLOVER_TRY(CheckDepth());
    NodePtr node;
    if (IsOp("-") || IsOp("+")) {
      node = Make(NodeKind::kUnary, Cur());
      node->name = Cur().text;
      Advance();
      CLOVER_ASSIGN_OR_RETURN(NodePtr e, ParseUnary(false));
      node->args.push_back(std::move(e));
      CLOVER_TRY(Grow(node.get()));
    } else {
      CLOVER_ASSIGN_OR_RETURN(node, ParsePrimary());
    }
    CLOVER_ASSIGN_OR_RETURN(node, ParsePostfix(std::move(node)));
    if (with_filter) return ParseFilterExpr(std::move(node));
    return node;
  }

  Result<NodePtr> ParsePrimary() {
    const Token& tok = Cur();
    switch (tok.kind) {
      case TokenKind::kName: {
        auto n = Make(NodeKind::kLiteral, tok);
        if (tok.text == "true" || tok.text == "True") {
          n->literal = Value::Bool(true);
        } else if (tok.text == "false" || tok.text == "False") {
          n->literal = Value::Bool(false);
        } else if (tok.text == "none" || tok.text == "None") {
          n->literal = Value::None();
        } else {
          n->kind = NodeKind::kName;
          n->name = tok.text;
        }
        Advance();
        return n;
      }
      case TokenKind::kString: {
        auto n = Make(NodeKind::kLiteral, tok);
        std::string s;
        while (Cur().kind == TokenKind::kString) {  // adjacent literals concatenate
          s += Cur().text;
          Advance();
        }
        n->literal = Value::String(std::move(s));
        return n;
      }
      case TokenKind::kInteger: {
        auto n = Make(NodeKind::kLiteral, tok);
        Int v = 0;
        for (char c : tok.text) {
          if (v > (static_cast<Int>(1) << 100)) return Syntax("integer literal too large");
          v = v * 10 + (c - '0');
        }
        n->literal = Value::Integer(v);
        Advance();
        return n;
      }
      case TokenKind::kFloat: {
        auto n = Make(NodeKind::kLiteral, tok);
        n->literal = Value::Float(std::strtod(tok.text.c_str(), nullptr));
        Advance();
        return n;
      }
      case TokenKind::kOperator:
        if (tok.text == "(") return ParseParenthesized();
        if (tok.text == "[") return ParseListLiteral();
        if (tok.text == "{") return ParseDictLiteral();
        break;
      default:
        break;
    }
    return Syntax("unexpected " + Describe(tok) + " in an expression");
  }

  Result<NodePtr> ParseParenthesized() {
    const Token& at = Cur();
    Advance();
    if (IsOp(")")) {
      Advance();
      return Make(NodeKind::kTuple, at);
    }
    CLOVER_ASSIGN_OR_RETURN(NodePtr first, ParseExpression());
    if (IsOp(")")) {
      Advance();
      return first;
    }
    auto t = Make(NodeKind::kTuple, at);
    t->args.push_back(std::move(first));
    while (IsOp(",")) {
      Advance();
      if (IsOp(")")) break;
      CLOVER_ASSIGN_OR_RETURN(NodePtr e, ParseExpression());
      t->args.push_back(std::move(e));
    }
    CLOVER_TRY(Expect(TokenKind::kOperator, ")", "')'"));
    return t;
  }

  Result<NodePtr> ParseListLiteral() {
    auto n = Make(NodeKind::kList, Cur());
    Advance();
    while (!IsOp("]")) {
      CLOVER_ASSIGN_OR_RETURN(NodePtr e, ParseExpression());
      n->args.push_back(std::move(e));
      if (!IsOp(",")) break;
      Advance();
    }
    CLOVER_TRY(Expect(TokenKind::kOperator, "]", "']'"));
    return n;
  }

  Result<NodePtr> ParseDictLiteral() {
    auto n = Make(NodeKind::kDict, Cur());
    Advance();
    while (!IsOp("}")) {
      CLOVER_ASSIGN_OR_RETURN(NodePtr k, ParseExpression());
      CLOVER_TRY(Expect(TokenKind::kOperator, ":", "':'"));
      CLOVER_ASSIGN_OR_RETURN(NodePtr v, ParseExpression());
      n->args.push_back(std::move(k));
      n->args.push_back(std::move(v));
      if (!IsOp(",")) break;
      Advance();
    }
    CLOVER_TRY(Expect(TokenKind::kOperator, "}", "'}'"));
    return n;
  }

  Result<NodePtr> ParsePostfix(NodePtr node) {
    while (true) {
      const Token& at = Cur();
      if (IsOp(".")) {
        Advance();
        if (Cur().kind == TokenKind::kName) {
          auto n = Make(NodeKind::kGetAttr, at);
          n->name = Cur().text;
          n->args.push_back(std::move(node));
          CLOVER_TRY(Grow(n.get()));
          node = std::move(n);
          Advance();
        } else if (Cur().kind == TokenKind::kInteger) {
          auto n = Make(NodeKind::kGetItem, at);
          auto idx = Make(NodeKind::kLiteral, Cur());
          idx->literal = Value::Integer(std::strtoll(Cur().text.c_str(), nullptr, 10));
          n->args.push_back(std::move(node));
          n->args.push_back(std::move(idx));
          CLOVER_TRY(Grow(n.get()));
          node = std::move(n);
          Advance();
        } else {
          return Syntax("expected an attribute name after '.'");
        }
      } else if (IsOp("[")) {
        CLOVER_ASSIGN_OR_RETURN(node, ParseSubscript(std::move(node)));
      } else if (IsOp("(")) {
        CLOVER_ASSIGN_OR_RETURN(node, ParseCall(std::move(node)));
      } else {
        return node;
      }
      CLOVER_TRY(Grow(node.get()));
    }
  }

  Result<NodePtr> ParseSubscript(NodePtr object) {
    const Token& at = Cur();
    Advance();
    NodePtr parts[3];
    int colons = 0;
    for (int i = 0; i < 3; ++i) {
      if (!IsOp(":") && !IsOp("]")) {
        CLOVER_ASSIGN_OR_RETURN(parts[i], ParseExpression());
      }
      if (i < 2 && IsOp(":")) {
        ++colons;
        Advance();
      } else {
        break;
      }
    }
    CLOVER_TRY(Expect(TokenKind::kOperator, "]", "']'"));
    if (colons == 0) {
      if (!parts[0]) return Syntax("empty subscript");
      auto n = Make(NodeKind::kGetItem, at);
      n->args.push_back(std::move(object));
      n->args.push_back(std::move(parts[0]));
      return n;
    }
    auto n = Make(NodeKind::kSlice, at);
    n->args.push_back(std::move(object));
    for (auto& p : parts) n->args.push_back(std::move(p));
    return n;
  }

  // Parses `(args, name=value)` into `n` (args appended after what `n` already holds).
  Status ParseArgs(Node* n) {
    CLOVER_TRY(Expect(TokenKind::kOperator, "(", "'('"));
    while (!IsOp(")")) {
      if (IsOp("*") || IsOp("**")) {
        return ErrorAt(Cur(), StatusCode::kUnimplemented, "unsupported construct '*args' in a call");
      }
      if (Cur().kind == TokenKind::kName && Next().kind == TokenKind::kOperator && Next().text == "=") {
        std::string key = Cur().text;
        Advance();
        Advance();
        CLOVER_ASSIGN_OR_RETURN(NodePtr v, ParseExpression());
        n->kwargs.emplace_back(std::move(key), std::move(v));
      } else {
        if (!n->kwargs.empty()) return Syntax("positional argument after a keyword argument");
        CLOVER_ASSIGN_OR_RETURN(NodePtr v, ParseExpression());
        n->args.push_back(std::move(v));
      }
      if (!IsOp(",")) break;
      Advance();
    }
    return Expect(TokenKind::kOperator, ")", "')'");
  }

  Result<NodePtr> ParseCall(NodePtr callee) {
    auto n = Make(NodeKind::kCall, Cur());
    n->args.push_back(std::move(callee));
    CLOVER_TRY(ParseArgs(n.get()));
    return n;
  }

  Result<NodePtr> ParseFilterExpr(NodePtr node) {
    while (true) {
      if (IsOp("|")) {
        Advance();
        const Token& at = Cur();
        if (at.kind != TokenKind::kName) return Syntax("expected a filter name after '|'");
        if (!IsKnownFilter(at.text)) {
          return ErrorAt(at, StatusCode::kUnimplemented, "unsupported filter '" + at.text + "'");
        }
        auto n = Make(NodeKind::kFilter, at);
        n->name = at.text;
        n->args.push_back(std::move(node));
        Advance();
        if (IsOp("(")) CLOVER_TRY(ParseArgs(n.get()));
        CLOVER_TRY(Grow(n.get()));
        node = std::move(n);
      } else if (IsName("is")) {
        Advance();
        auto n = Make(NodeKind::kTest, Cur());
        if (IsName("not")) {
          n->negated = true;
          Advance();
        }
        if (Cur().kind != TokenKind::kName) return Syntax("expected a test name after 'is'");
        n->name = Cur().text;
        if (!IsKnownTest(n->name)) {
          return ErrorAt(Cur(), StatusCode::kUnimplemented, "unsupported test '" + n->name + "'");
        }
        Advance();
        n->args.push_back(std::move(node));
        if (IsOp("(")) {
          CLOVER_TRY(ParseArgs(n.get()));
        } else if ((Cur().kind == TokenKind::kString || Cur().kind == TokenKind::kInteger ||
                    Cur().kind == TokenKind::kFloat ||
                    (Cur().kind == TokenKind::kName && !IsName("else") && !IsName("or") &&
                     !IsName("and") && !IsName("if") && !IsName("in") && !IsName("not")))) {
          // `x is divisibleby 3`: one argument without parentheses.
          CLOVER_ASSIGN_OR_RETURN(NodePtr arg, ParsePrimary());
          CLOVER_ASSIGN_OR_RETURN(arg, ParsePostfix(std::move(arg)));
          n->args.push_back(std::move(arg));
        }
        CLOVER_TRY(Grow(n.get()));
        node = std::move(n);
      } else if (IsOp("(")) {
        CLOVER_ASSIGN_OR_RETURN(node, ParseCall(std::move(node)));
        CLOVER_TRY(Grow(node.get()));
      } else {
        return node;
      }
    }
  }

  const std::vector<Token>& t_;
  const std::string& name_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Result<std::vector<NodePtr>> Parse(const std::vector<Token>& tokens, const std::string& name) {
  return Parser(tokens, name).Run();
}

}  // namespace clover::tokenizer::jinja
