// Python str helpers: whitespace, strip, split, case mapping.
#include "tokenizer/jinja/py_string.h"

#include <utf8proc.h>

#include "tokenizer/utf8.h"

namespace clover::tokenizer::jinja {

bool IsPyWhitespace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::u32string ToCodePoints(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    const int n = DecodeUtf8(s, i, &cp);
    if (n < 0) {
      out.push_back(0xFFFD);
      i += -n;
    } else {
      out.push_back(cp);
      i += n;
    }
  }
  return out;
}

std::string FromCodePoints(const std::u32string& cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t cp : cps) AppendUtf8(cp, &out);
  return out;
}

std::string PyStrip(const std::string& s, const std::optional<std::string>& chars, bool left,
                    bool right) {
  const std::u32string cps = ToCodePoints(s);
  const std::u32string set = chars ? ToCodePoints(*chars) : std::u32string();
  auto strip = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : IsPyWhitespace(c);
  };
  size_t b = 0, e = cps.size();
  if (left) {
    while (b < e && strip(cps[b])) ++b;
  }
  if (right) {
    while (e > b && strip(cps[e - 1])) --e;
  }
  return FromCodePoints(cps.substr(b, e - b));
}

std::vector<std::string> PySplit(const std::string& s, const std::optional<std::string>& sep,
                                 long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<long>(out.size()) < maxsplit) {
      const size_t at = s.find(*sep, start);
      if (at == std::string::npos) break;
      out.push_back(s.substr(start, at - start));
      start = at + sep->size();
    }
    out.push_back(s.substr(start));
    return out;
  }
  const std::u32string cps = ToCodePoints(s);
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && IsPyWhitespace(cps[i])) ++i;
    if (i >= cps.size()) break;
    if (maxsplit >= 0 && static_cast<long>(out.size()) >= maxsplit) {
      size_t e = cps.size();
      while (e > i && IsPyWhitespace(cps[e - 1])) --e;
      out.push_back(FromCodePoints(cps.substr(i, e - i)));
      break;
    }
    size_t j = i;
    while (j < cps.size() && !IsPyWhitespace(cps[j])) ++j;
    out.push_back(FromCodePoints(cps.substr(i, j - i)));
    i = j;
  }
  return out;
}

std::string PyCase(const std::string& s, bool upper) {
  std::u32string cps = ToCodePoints(s);
  for (char32_t& c : cps) {
    c = static_cast<char32_t>(upper ? utf8proc_toupper(static_cast<utf8proc_int32_t>(c))
                                    : utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  }
  return FromCodePoints(cps);
}

}  // namespace clover::tokenizer::jinja
