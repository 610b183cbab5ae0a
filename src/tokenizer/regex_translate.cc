// Oniguruma -> PCRE2 pattern rewriting with class ranges computed from utf8proc.
#include "tokenizer/regex_translate.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace clover::tokenizer {
namespace {

using Ranges = std::vector<std::pair<char32_t, char32_t>>;
constexpr char32_t kMaxCodePoint = 0x10FFFF;

// Unicode White_Space (PropList.txt), stable since Unicode 6.3.
const Ranges& WhiteSpaceRanges() {
  static const Ranges ranges = {{0x09, 0x0D}, {0x20, 0x20},     {0x85, 0x85},
                                {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
                                {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
                                {0x3000, 0x3000}};
  return ranges;
}

// Letters and digits assigned after Unicode 15.0 (utf8proc 2.8's tables) that HF's Oniguruma
// (Unicode 16) already classifies: CJK Extension I (15.1, Lo), Garay digits and Outlined
// digits (16.0, Nd). The goldens' regex_semantics cases check exactly these.
struct LateAssignment {
  char32_t lo, hi;
  int category;
};
constexpr LateAssignment kLateAssignments[] = {
    {0x2EBF0, 0x2EE5D, UTF8PROC_CATEGORY_LO},
    {0x10D40, 0x10D49, UTF8PROC_CATEGORY_ND},
    {0x1CCF0, 0x1CCF9, UTF8PROC_CATEGORY_ND},
};

int Category(char32_t cp) {
  const int c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  if (c != UTF8PROC_CATEGORY_CN) return c;
  for (const LateAssignment& a : kLateAssignments) {
    if (cp >= a.lo && cp <= a.hi) return a.category;
  }
  return c;
}

// Returns the ranges of code points whose general category passes `keep`.
template <typename Pred>
Ranges CategoryRanges(Pred keep) {
  Ranges out;
  for (char32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (!keep(Category(cp))) continue;
    if (!out.empty() && out.back().second + 1 == cp) {
      out.back().second = cp;
    } else {
      out.emplace_back(cp, cp);
    }
  }
  return out;
}

// Returns the code points not in `in`, leaving out surrogates (PCRE2 rejects them in UTF mode).
Ranges Complement(const Ranges& in) {
  Ranges gaps;
  char32_t next = 0;
  for (const auto& [lo, hi] : in) {
    if (lo > next) gaps.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) gaps.emplace_back(next, kMaxCodePoint);
  Ranges out;
  for (const auto& [lo, hi] : gaps) {
    if (hi < 0xD800 || lo > 0xDFFF) {
      out.emplace_back(lo, hi);
      continue;
    }
    if (lo < 0xD800) out.emplace_back(lo, 0xD7FF);
    if (hi > 0xDFFF) out.emplace_back(0xE000, hi);
  }
  return out;
}

Ranges Union(Ranges a, const Ranges& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  Ranges out;
  for (const auto& r : a) {
    if (!out.empty() && r.first <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// Returns the ranges for a property name (`L`, `Lu`, `Letter`, `N`, `Nd`, `M`, `Mn`, ...).
Result<Ranges> PropertyRanges(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, Ranges> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  static const std::map<std::string, std::vector<int>> kCategories = {
      {"L", {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT,
             UTF8PROC_CATEGORY_LM, UTF8PROC_CATEGORY_LO}},
      {"Lu", {UTF8PROC_CATEGORY_LU}}, {"Ll", {UTF8PROC_CATEGORY_LL}},
      {"Lt", {UTF8PROC_CATEGORY_LT}}, {"Lm", {UTF8PROC_CATEGORY_LM}},
      {"Lo", {UTF8PROC_CATEGORY_LO}},
      {"N", {UTF8PROC_CATEGORY_ND, UTF8PROC_CATEGORY_NL, UTF8PROC_CATEGORY_NO}},
      {"Nd", {UTF8PROC_CATEGORY_ND}}, {"Nl", {UTF8PROC_CATEGORY_NL}},
      {"No", {UTF8PROC_CATEGORY_NO}},
      {"M", {UTF8PROC_CATEGORY_MN, UTF8PROC_CATEGORY_MC, UTF8PROC_CATEGORY_ME}},
      {"Mn", {UTF8PROC_CATEGORY_MN}}, {"Mc", {UTF8PROC_CATEGORY_MC}},
      {"Me", {UTF8PROC_CATEGORY_ME}},
      {"P", {UTF8PROC_CATEGORY_PC, UTF8PROC_CATEGORY_PD, UTF8PROC_CATEGORY_PS,
             UTF8PROC_CATEGORY_PE, UTF8PROC_CATEGORY_PI, UTF8PROC_CATEGORY_PF,
             UTF8PROC_CATEGORY_PO}},
      {"S", {UTF8PROC_CATEGORY_SM, UTF8PROC_CATEGORY_SC, UTF8PROC_CATEGORY_SK,
             UTF8PROC_CATEGORY_SO}},
      {"Z", {UTF8PROC_CATEGORY_ZS, UTF8PROC_CATEGORY_ZL, UTF8PROC_CATEGORY_ZP}},
      {"Pc", {UTF8PROC_CATEGORY_PC}},
  };
  static const std::map<std::string, std::string> kAliases = {
      {"Letter", "L"}, {"Number", "N"}, {"Mark", "M"}, {"Punctuation", "P"}, {"Symbol", "S"},
      {"Separator", "Z"}};
  std::string key = name;
  if (auto a = kAliases.find(key); a != kAliases.end()) key = a->second;
  auto cat = kCategories.find(key);
  if (cat == kCategories.end()) {
    return Unimplemented("pre-tokenizer regex: Unicode property \\p{" + name +
                         "} is not supported (expected L, N, M, P, S, Z or a subcategory)");
  }
  const std::vector<int>& cats = cat->second;
  Ranges r = CategoryRanges([&](int c) {
    for (int k : cats) {
      if (c == k) return true;
    }
    return false;
  });
  cache[name] = r;
  return r;
}

void AppendRanges(const Ranges& ranges, std::string* out) {
  char buf[32];
  for (const auto& [lo, hi] : ranges) {
    if (lo == hi) {
      std::snprintf(buf, sizeof(buf), "\\x{%X}", static_cast<unsigned>(lo));
    } else {
      std::snprintf(buf, sizeof(buf), "\\x{%X}-\\x{%X}", static_cast<unsigned>(lo),
                    static_cast<unsigned>(hi));
    }
    *out += buf;
  }
}

// Returns the ranges of a class escape at `p[i]` (after the backslash), advancing `i`, or
// nullopt-like empty result with `matched` false when the escape is not a class escape.
Result<Ranges> ClassEscape(std::string_view p, size_t* i, bool* matched) {
  *matched = true;
  const char c = p[*i];
  if (c == 'p' || c == 'P') {
    bool negate = c == 'P';
    if (*i + 1 >= p.size() || p[*i + 1] != '{') {
      return InvalidArgument("pre-tokenizer regex: \\" + std::string(1, c) +
                             " without {name} at offset " + std::to_string(*i));
    }
    const size_t close = p.find('}', *i + 2);
    if (close == std::string_view::npos) {
      return InvalidArgument("pre-tokenizer regex: unterminated \\p{ at offset " +
                             std::to_string(*i));
    }
    std::string name(p.substr(*i + 2, close - *i - 2));
    if (!name.empty() && name[0] == '^') {
      negate = !negate;
      name.erase(0, 1);
    }
    *i = close + 1;
    CLOVER_ASSIGN_OR_RETURN(Ranges r, PropertyRanges(name));
    return negate ? Complement(r) : r;
  }
  if (c == 's' || c == 'S') {
    ++*i;
    return c == 's' ? WhiteSpaceRanges() : Complement(WhiteSpaceRanges());
  }
  if (c == 'd' || c == 'D') {
    ++*i;
    CLOVER_ASSIGN_OR_RETURN(Ranges r, PropertyRanges("Nd"));
    return c == 'd' ? r : Complement(r);
  }
  if (c == 'w' || c == 'W') {
    ++*i;
    // Oniguruma's Unicode \w: Letter | Mark | Decimal_Number | Connector_Punctuation.
    Ranges r;
    for (const char* name : {"L", "M", "Nd", "Pc"}) {
      CLOVER_ASSIGN_OR_RETURN(Ranges part, PropertyRanges(name));
      r = Union(std::move(r), part);
    }
    return c == 'w' ? r : Complement(r);
  }
  *matched = false;
  return Ranges{};
}

}  // namespace

Result<std::string> TranslateOnigurumaPattern(std::string_view p) {
  std::string out;
  out.reserve(p.size() * 8);
  bool in_class = false;
  size_t class_start = 0;
  size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return InvalidArgument("pre-tokenizer regex: trailing backslash");
      size_t j = i + 1;
      bool matched = false;
      CLOVER_ASSIGN_OR_RETURN(Ranges r, ClassEscape(p, &j, &matched));
      if (matched) {
        if (!in_class) out += '[';
        AppendRanges(r, &out);
        if (!in_class) out += ']';
        i = j;
      } else {
        out.append(p.substr(i, 2));
        i += 2;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      ++i;
      class_start = i;
      if (i < p.size() && p[i] == '^') {
        out += '^';
        ++i;
        class_start = i;
      }
      continue;
    }
    if (in_class && c == '[') {
      return Unimplemented("pre-tokenizer regex: nested character class at offset " +
                           std::to_string(i));
    }
    if (in_class && c == ']' && i != class_start) in_class = false;
    out += c;
    ++i;
  }
  if (in_class) return InvalidArgument("pre-tokenizer regex: unterminated character class");
  return out;
}

}  // namespace clover::tokenizer
