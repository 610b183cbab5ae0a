// Jinja lexer (text / {{ }} / {% %} / {# #}) following Jinja2's lexer rules for whitespace.
#include "tokenizer/jinja/lexer.h"

#include <algorithm>
#include <cctype>

#include "tokenizer/utf8.h"

namespace clover::tokenizer::jinja {
namespace {

bool IsPySpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& name) : src_(src), name_(name) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src.size(); ++i) {
      if (src[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  Result<std::vector<Token>> Run() {
    size_t pos = 0;
    bool line_starting = true;  // the previous tag ended with a newline it consumed
    bool strip_next = false;    // the previous tag ended with `-`
    while (pos <= src_.size()) {
      size_t start = FindTagStart(pos);
      std::string text(src_.substr(pos, start == std::string_view::npos ? std::string_view::npos
                                                                         : start - pos));
      if (strip_next) {
        text.erase(0, std::find_if_not(text.begin(), text.end(), IsPySpace) - text.begin());
      }
      if (start == std::string_view::npos) {
        Emit(TokenKind::kText, std::move(text), pos);
        break;
      }
      const char kind = src_[start + 1];
      const char marker = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (marker == '-') {
        while (!text.empty() && IsPySpace(text.back())) text.pop_back();
      } else if (marker != '+' && kind != '{') {
        // lstrip_blocks: drop spaces between the line start and a block or comment tag.
        const size_t nl = text.rfind('\n');
        const size_t l = nl == std::string::npos ? 0 : nl + 1;
        if ((nl != std::string::npos || line_starting) && l < text.size() &&
            std::all_of(text.begin() + l, text.end(), IsPySpace)) {
          text.erase(l);
        }
      }
      Emit(TokenKind::kText, std::move(text), pos);
      size_t p = start + 2 + ((marker == '-' || marker == '+') ? 1 : 0);
      bool trim_newline = false;
      if (kind == '#') {
        const size_t end = src_.find("#}", p);
        if (end == std::string_view::npos) return Error(start, "unterminated comment");
        strip_next = end > p && src_[end - 1] == '-';
        trim_newline = !strip_next && !(end > p && src_[end - 1] == '+');
        pos = end + 2;
      } else {
        Emit(kind == '{' ? TokenKind::kVarBegin : TokenKind::kBlockBegin, "", start);
        auto end = LexTag(p, kind == '{' ? '}' : '%');
        if (!end.ok()) return end.status();
        pos = *end;
        strip_next = src_[pos - 3] == '-';
        trim_newline = kind == '%' && !strip_next && src_[pos - 3] != '+';
      }
      line_starting = false;
      if (trim_newline && pos < src_.size() && src_[pos] == '\n') {
        ++pos;
        line_starting = true;
      }
      if (pos == src_.size()) break;
    }
    Emit(TokenKind::kEnd, "", src_.size());
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart(size_t pos) const {
    while (true) {
      const size_t at = src_.find('{', pos);
      if (at == std::string_view::npos || at + 1 >= src_.size()) return std::string_view::npos;
      const char c = src_[at + 1];
      if (c == '{' || c == '%' || c == '#') return at;
      pos = at + 1;
    }
  }

  void Emit(TokenKind kind, std::string text, size_t offset) {
    if (kind == TokenKind::kText && text.empty()) return;
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - 1;
    const int line = static_cast<int>(it - line_starts_.begin()) + 1;
    const int col = static_cast<int>(CountCodePoints(src_.substr(*it, offset - *it))) + 1;
    tokens_.push_back({kind, std::move(text), line, col});
  }

  Status Error(size_t offset, const std::string& what) {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - 1;
    return InvalidArgument("template " + name_ + ":" +
                           std::to_string(it - line_starts_.begin() + 1) + ":" +
                           std::to_string(offset - *it + 1) + ": syntax error: " + what);
  }

  // Lexes expression tokens from `p` to the closing `}}` / `%}`; returns the offset after it.
  Result<size_t> LexTag(size_t p, char closer) {
    static const char* kOps2[] = {"**", "//", "==", "!=", "<=", ">="};
    while (true) {
      while (p < src_.size() && IsPySpace(src_[p])) ++p;
      if (p >= src_.size()) return Error(p, std::string("missing closing '") + closer + "}'");
      const std::string_view rest = src_.substr(p);
      for (const char* m : {"-", "+", ""}) {
        const std::string end = std::string(m) + closer + "}";
        if (rest.substr(0, end.size()) == end) {
          Emit(closer == '}' ? TokenKind::kVarEnd : TokenKind::kBlockEnd, "", p);
          return p + end.size();
        }
      }
      const char c = src_[p];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t e = p;
        while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        Emit(TokenKind::kName, std::string(src_.substr(p, e - p)), p);
        p = e;
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c))) {
        size_t e = p;
        bool is_float = false;
        while (e < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
          is_float = true;
          ++e;
          while (e < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        }
        if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
          size_t x = e + 1;
          if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
          if (x < src_.size() && std::isdigit(static_cast<unsigned char>(src_[x]))) {
            is_float = true;
            e = x;
            while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
          }
        }
        std::string digits;
        for (char d : src_.substr(p, e - p)) {
          if (d != '_') digits += d;
        }
        Emit(is_float ? TokenKind::kFloat : TokenKind::kInteger, digits, p);
        p = e;
        continue;
      }
      if (c == '\'' || c == '"') {
        auto end = LexString(p);
        if (!end.ok()) return end.status();
        p = *end;
        continue;
      }
      bool matched = false;
      for (const char* op : kOps2) {
        if (rest.substr(0, 2) == op) {
          Emit(TokenKind::kOperator, op, p);
          p += 2;
          matched = true;
          break;
        }
      }
      if (matched) continue;
      if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) != std::string_view::npos) {
        Emit(TokenKind::kOperator, std::string(1, c), p);
        ++p;
        continue;
      }
      return Error(p, "unexpected character '" + std::string(1, c) + "'");
    }
  }

  Result<size_t> LexString(size_t p) {
    const char quote = src_[p];
    std::string value;
    size_t i = p + 1;
    while (i < src_.size() && src_[i] != quote) {
      if (src_[i] != '\\') {
        value += src_[i++];
        continue;
      }
      if (i + 1 >= src_.size()) break;
      const char e = src_[i + 1];
      i += 2;
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case 'a': value += '\a'; break;
        case '0': value += '\0'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\n': break;  // line continuation
        case 'x':
        case 'u':
        case 'U': {
          const size_t len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i + len > src_.size()) return Error(i, "truncated \\" + std::string(1, e) + " escape");
          char32_t cp = 0;
          for (size_t k = 0; k < len; ++k) {
            const char h = src_[i + k];
            if (!std::isxdigit(static_cast<unsigned char>(h))) {
              return Error(i, "bad \\" + std::string(1, e) + " escape");
            }
            cp = cp * 16 + static_cast<char32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return Error(i, "escape is not a valid code point");
          AppendUtf8(cp, &value);
          i += len;
          break;
        }
        default:  // Python keeps unknown escapes verbatim
          value += '\\';
          value += e;
      }
    }
    if (i >= src_.size()) return Error(p, "unterminated string literal");
    Emit(TokenKind::kString, std::move(value), p);
    return i + 1;
  }

  std::string_view src_;
  const std::string& name_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

Result<std::vector<Token>> Lex(std::string_view source, const std::string& name) {
  return Lexer(source, name).Run();
}

}  // namespace clover::tokenizer::jinja
