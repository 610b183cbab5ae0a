// PCRE2-backed Isolated split of the pre-tokenizer.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex_splitter.h"

#include <pcre2.h>

#include "tokenizer/regex_translate.h"

namespace clover::tokenizer {

struct RegexSplitter::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

namespace {

// Per-thread match state; the JIT stack is sized for long runs of one class (e.g. 1 MB of
// spaces) without falling back to the interpreter.
struct MatchState {
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  MatchState() {
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    if (context && stack) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
  }
};

}  // namespace

Result<RegexSplitter> RegexSplitter::Create(std::string_view pattern) {
  CLOVER_ASSIGN_OR_RETURN(std::string translated, TranslateOnigurumaPattern(pattern));
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()),
                                   translated.size(), PCRE2_UTF | PCRE2_UCP, &error, &offset,
                                   nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return InvalidArgument("pre-tokenizer regex \"" + std::string(pattern) +
                           "\" does not compile: " + reinterpret_cast<const char*>(message));
  }
  // JIT is an optimization only: without it pcre2_match interprets the same pattern.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  RegexSplitter splitter;
  splitter.pattern_ = std::string(pattern);
  splitter.code_ = std::make_shared<Code>();
  splitter.code_->code = code;
  return splitter;
}

void RegexSplitter::Split(std::string_view text, std::vector<std::string_view>* pieces) const {
  thread_local MatchState state;
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  size_t last = 0;
  while (pos < text.size()) {
    const int rc = pcre2_match(code_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, match,
                               state.context);
    if (rc < 0) break;  // no further match (a resource limit also ends the scan: rest is a gap)
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
    size_t start = ov[0], end = ov[1];
    if (end == start) {
      // Empty matches produce no piece; step one code point to make progress.
      ++pos;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    if (start > last) pieces->push_back(text.substr(last, start - last));
    pieces->push_back(text.substr(start, end - start));
    last = pos = end;
  }
  if (last < text.size()) pieces->push_back(text.substr(last));
  pcre2_match_data_free(match);
}

}  // namespace clover::tokenizer
