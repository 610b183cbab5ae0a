// Python-compatible formatting of values (the reference renderer is Python Jinja2).
#include "tokenizer/jinja/python_format.h"

#include <utf8proc.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "tokenizer/utf8.h"

namespace clover::tokenizer::jinja {
namespace {

void AppendHex(const char* fmt, unsigned value, std::string* out) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), fmt, value);
  *out += buf;
}

// Python's str.isprintable: everything but categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (and
// space is printable).
bool IsPrintable(char32_t cp) {
  if (cp == ' ') return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS:
      return false;
    default:
      return true;
  }
}

std::string ReprString(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    const int n = DecodeUtf8(s, i, &cp);
    if (n < 0) {  // strings come from valid UTF-8 input; keep the byte as an escape
      AppendHex("\\x%02x", static_cast<unsigned char>(s[i]), &out);
      ++i;
      continue;
    }
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F) {
      AppendHex("\\x%02x", cp, &out);
    } else if (cp >= 0x80 && !IsPrintable(cp)) {
      AppendHex(cp <= 0xFF ? "\\x%02x" : cp <= 0xFFFF ? "\\u%04x" : "\\U%08x", cp, &out);
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  out += quote;
  return out;
}

void JsonString(const std::string& s, bool ensure_ascii, std::string* out) {
  *out += '"';
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': *out += "\\\""; ++i; continue;
      case '\\': *out += "\\\\"; ++i; continue;
      case '\n': *out += "\\n"; ++i; continue;
      case '\r': *out += "\\r"; ++i; continue;
      case '\t': *out += "\\t"; ++i; continue;
      case '\b': *out += "\\b"; ++i; continue;
      case '\f': *out += "\\f"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      AppendHex("\\u%04x", c, out);
      ++i;
      continue;
    }
    if (c < 0x80 || !ensure_ascii) {
      *out += static_cast<char>(c);
      ++i;
      continue;
    }
    char32_t cp;
    const int n = DecodeUtf8(s, i, &cp);
    if (n < 0) {
      *out += "\\ufffd";
      i += -n;
      continue;
    }
    if (cp >= 0x10000) {
      const char32_t v = cp - 0x10000;
      AppendHex("\\u%04x", 0xD800 + (v >> 10), out);
      AppendHex("\\u%04x", 0xDC00 + (v & 0x3FF), out);
    } else {
      AppendHex("\\u%04x", cp, out);
    }
    i += n;
  }
  *out += '"';
}

Status DumpTo(const Value& v, const JsonDumpsOptions& o, int depth, std::string* out) {
  constexpr int kMaxDepth = 512;  // Python's json raises RecursionError much deeper; keep bounded
  if (depth > kMaxDepth) return ResourceExhausted("tojson: value nests deeper than 512 levels");
  auto newline = [&](int level) {
    if (!o.indent) return;
    *out += '\n';
    for (int k = 0; k < level; ++k) *out += *o.indent;
  };
  switch (v.kind()) {
    case ValueKind::kNone:
      *out += "null";
      return Status::Ok();
    case ValueKind::kBool:
      *out += v.bool_value() ? "true" : "false";
      return Status::Ok();
    case ValueKind::kInt:
      *out += FormatInt(v.int_value());
      return Status::Ok();
    case ValueKind::kFloat: {
      const double f = v.float_value();
      *out += std::isnan(f) ? "NaN" : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity") : FormatFloat(f);
      return Status::Ok();
    }
    case ValueKind::kString:
      JsonString(v.str(), o.ensure_ascii, out);
      return Status::Ok();
    case ValueKind::kList: {
      if (v.list().empty()) {
        *out += "[]";
        return Status::Ok();
      }
      *out += '[';
      for (size_t i = 0; i < v.list().size(); ++i) {
        if (i > 0) *out += o.item_separator;
        newline(depth + 1);
        CLOVER_TRY(DumpTo(v.list()[i], o, depth + 1, out));
      }
      newline(depth);
      *out += ']';
      return Status::Ok();
    }
    case ValueKind::kDict: {
      if (v.dict().empty()) {
        *out += "{}";
        return Status::Ok();
      }
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& e : v.dict()) entries.push_back(&e);
      if (o.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto* a, const auto* b) { return a->first < b->first; });
      }
      *out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) *out += o.item_separator;
        newline(depth + 1);
        JsonString(entries[i]->first, o.ensure_ascii, out);
        *out += o.key_separator;
        CLOVER_TRY(DumpTo(entries[i]->second, o, depth + 1, out));
      }
      newline(depth);
      *out += '}';
      return Status::Ok();
    }
    default:
      return InvalidArgument(std::string("TypeError: Object of type ") + v.TypeName() +
                             " is not JSON serializable");
  }
}

}  // namespace

std::string FormatInt(Int i) {
  if (i == 0) return "0";
  const bool negative = i < 0;
  // Work on the magnitude as unsigned so the most negative value cannot overflow.
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(i) : static_cast<unsigned __int128>(i);
  std::string digits;
  while (u > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::string FormatFloat(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: exponent form when the decimal exponent
  // is < -4 or >= 16 (float_repr_style 'short').
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string sign;
  if (mantissa[0] == '-') {
    sign = "-";
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  if (exponent < -4 || exponent >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + ebuf;
  }
  std::string out = sign;
  if (exponent < 0) {
    out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    return out;
  }
  const size_t int_len = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_len) {
    out += digits + std::string(int_len - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, int_len) + "." + digits.substr(int_len);
  }
  return out;
}

std::string PyStr(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return "";
    case ValueKind::kString:
      return v.str();
    default:
      return PyRepr(v);
  }
}

std::string PyRepr(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return "";
    case ValueKind::kNone:
      return "None";
    case ValueKind::kBool:
      return v.bool_value() ? "True" : "False";
    case ValueKind::kInt:
      return FormatInt(v.int_value());
    case ValueKind::kFloat:
      return FormatFloat(v.float_value());
    case ValueKind::kString:
      return ReprString(v.str());
    case ValueKind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < v.list().size(); ++i) {
        if (i > 0) out += ", ";
        out += PyRepr(v.list()[i]);
      }
      return out + "]";
    }
    case ValueKind::kDict:
    case ValueKind::kNamespace: {
      std::string out = v.kind() == ValueKind::kNamespace ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, e] : v.dict()) {
        if (!first) out += ", ";
        first = false;
        out += ReprString(k) + ": " + PyRepr(e);
      }
      return out + (v.kind() == ValueKind::kNamespace ? "}>" : "}");
    }
    case ValueKind::kFunction:
      return "<function " + v.function_name() + ">";
  }
  return "";
}

Result<std::string> JsonDumps(const Value& v, const JsonDumpsOptions& options) {
  std::string out;
  CLOVER_TRY(DumpTo(v, options, 0, &out));
  return out;
}

}  // namespace clover::tokenizer::jinja
