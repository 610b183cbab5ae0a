// Python str methods on UTF-8 strings (code point semantics where Python's differ from bytes).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace clover::tokenizer::jinja {

// Python's str.isspace for one code point.
bool IsPyWhitespace(char32_t cp);
// str.strip / lstrip / rstrip; `chars` nullopt strips whitespace.
std::string PyStrip(const std::string& s, const std::optional<std::string>& chars, bool left,
                    bool right);
// str.split(sep, maxsplit); `sep` nullopt splits on whitespace runs.
std::vector<std::string> PySplit(const std::string& s, const std::optional<std::string>& sep,
                                 long maxsplit);
// Returns the code points of `s`.
std::u32string ToCodePoints(const std::string& s);
// Returns UTF-8 of `cps`.
std::string FromCodePoints(const std::u32string& cps);
// str.upper / str.lower (simple case mapping per code point).
std::string PyCase(const std::string& s, bool upper);

}  // namespace clover::tokenizer::jinja
