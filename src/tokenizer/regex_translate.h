// Rewrites an Oniguruma pre-tokenizer pattern (as HF tokenizers runs it) into an equivalent PCRE2
// pattern whose Unicode classes are spelled out as code point ranges.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace clover::tokenizer {

// Returns `pattern` with `\p{..}`/`\P{..}` (L, N, M and their subcategories), `\s`, `\S`, `\d`,
// `\D`, `\w`, `\W` replaced by explicit classes: letters/numbers/marks from utf8proc's Unicode
// tables and `\s` as Unicode White_Space (Oniguruma's definition, which includes U+0085 where
// PCRE2's UCP `\s` does not), so the split does not depend on PCRE2's own Unicode version.
Result<std::string> TranslateOnigurumaPattern(std::string_view pattern);

}  // namespace clover::tokenizer
