// A compiled pre-tokenizer regex (PCRE2, UTF, JIT) that splits text the way HF's
// `Split(behavior=Isolated, invert=false)` does.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace clover::tokenizer {

class RegexSplitter {
 public:
  // Returns a splitter for an Oniguruma-syntax `pattern` (see regex_translate.h).
  static Result<RegexSplitter> Create(std::string_view pattern);

  // Appends to `pieces` every match of the pattern in valid UTF-8 `text`, and every stretch
  // between matches, in order; the pieces concatenate back to `text`.
  void Split(std::string_view text, std::vector<std::string_view>* pieces) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Code;
  std::string pattern_;
  std::shared_ptr<Code> code_;
};

}  // namespace clover::tokenizer
