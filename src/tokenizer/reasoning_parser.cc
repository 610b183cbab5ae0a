// Incremental <think> splitter.
#include "tokenizer/reasoning_parser.h"

#include <algorithm>

namespace clover::tokenizer {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Returns the length of the longest suffix of `s` that is a proper prefix of `tag`.
size_t PartialTagSuffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

ReasoningParser::ReasoningParser(bool in_reasoning, std::string open_tag, std::string close_tag)
    : state_(in_reasoning ? State::kReasoning : State::kStart),
      open_(std::move(open_tag)),
      close_(std::move(close_tag)) {}

ReasoningDelta ReasoningParser::Feed(std::string_view text) {
  buffer_.append(text);
  ReasoningDelta out;
  Process(&out, false);
  return out;
}

ReasoningDelta ReasoningParser::Finish() {
  ReasoningDelta out;
  Process(&out, true);
  return out;
}

ReasoningDelta ReasoningParser::Split(std::string_view text, bool in_reasoning) {
  ReasoningParser p(in_reasoning);
  ReasoningDelta a = p.Feed(text);
  ReasoningDelta b = p.Finish();
  a.reasoning += b.reasoning;
  a.content += b.content;
  return a;
}

void ReasoningParser::Process(ReasoningDelta* out, bool final) {
  while (true) {
    switch (state_) {
      case State::kStart: {
        const size_t first = std::find_if_not(buffer_.begin(), buffer_.end(), IsSpace) - buffer_.begin();
        const std::string_view rest = std::string_view(buffer_).substr(first);
        if (rest.substr(0, open_.size()) == open_) {
          buffer_.erase(0, first + open_.size());
          state_ = State::kReasoning;
          continue;
        }
        if (!final && std::string_view(open_).substr(0, rest.size()) == rest) return;  // undecided
        state_ = State::kContent;
        continue;
      }
      case State::kReasoning: {
        if (!reasoning_started_) {
          buffer_.erase(0, std::find_if_not(buffer_.begin(), buffer_.end(), IsSpace) - buffer_.begin());
        }
        const size_t close = buffer_.find(close_);
        if (close != std::string::npos) {
          std::string_view body = std::string_view(buffer_).substr(0, close);
          while (!body.empty() && IsSpace(body.back())) body.remove_suffix(1);
          out->reasoning.append(body);
          buffer_.erase(0, close + close_.size());
          state_ = State::kAfterClose;
          continue;
        }
        // Hold back a possible partial tag and the whitespace before it (it may precede the
        // close tag, which trims it).
        size_t keep = final ? buffer_.size() : buffer_.size() - PartialTagSuffix(buffer_, close_);
        size_t emit = keep;
        if (!final) {
          while (emit > 0 && IsSpace(buffer_[emit - 1])) --emit;
        }
        if (emit > 0) reasoning_started_ = true;
        out->reasoning.append(buffer_, 0, emit);
        buffer_.erase(0, emit);
        return;
      }
      case State::kAfterClose: {
        buffer_.erase(0, std::find_if_not(buffer_.begin(), buffer_.end(), IsSpace) - buffer_.begin());
        if (buffer_.empty()) return;
        state_ = State::kContent;
        continue;
      }
      case State::kContent:
        out->content.append(buffer_);
        buffer_.clear();
        return;
    }
  }
}

bool PromptOpensReasoning(std::string_view rendered, std::string_view open_tag,
                          std::string_view close_tag) {
  const size_t open = rendered.rfind(open_tag);
  const size_t close = rendered.rfind(close_tag);
  return open != std::string_view::npos && (close == std::string_view::npos || close < open);
}

}  // namespace clover::tokenizer
