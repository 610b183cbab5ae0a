// Splits generated text into reasoning (<think>...</think>) and content, incrementally.
#pragma once

#include <string>
#include <string_view>

namespace clover::tokenizer {

struct ReasoningDelta {
  std::string reasoning;
  std::string content;
};

// Returns true when a rendered prompt ends inside an open <think> block (Qwen-style templates open
// it in the generation prompt when thinking is on), so generation starts in the reasoning.
bool PromptOpensReasoning(std::string_view rendered, std::string_view open_tag = "<think>",
                          std::string_view close_tag = "</think>");

class ReasoningParser {
 public:
  // `in_reasoning`: the prompt already opened the reasoning block (Qwen3.5's generation prompt
  // ends with "<think>\n"), so output starts inside it.
  explicit ReasoningParser(bool in_reasoning = false, std::string open_tag = "<think>",
                           std::string close_tag = "</think>");

  // Returns what `text` adds to each channel. A tag split across chunks is held back until it
  // is complete or ruled out; whitespace around the reasoning block is dropped.
  ReasoningDelta Feed(std::string_view text);
  // Returns whatever is held back (end of generation).
  ReasoningDelta Finish();

  // Returns the split of a complete text.
  static ReasoningDelta Split(std::string_view text, bool in_reasoning = false);

 private:
  enum class State { kStart, kReasoning, kAfterClose, kContent };
  void Process(ReasoningDelta* out, bool final);

  State state_;
  bool reasoning_started_ = false;  // a non-space reasoning character was emitted
  std::string open_, close_;
  std::string buffer_;
};

}  // namespace clover::tokenizer
