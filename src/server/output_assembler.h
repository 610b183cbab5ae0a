// Turns a generation's streamed text into OpenAI message deltas: whole UTF-8 characters only,
// reasoning (<think>...</think>) split from content, Qwen tool calls parsed out of content.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/reasoning_parser.h"
#include "tokenizer/tool_call_parser.h"

namespace clover::server {

struct MessageDelta {
  std::string reasoning;
  std::string content;
  std::vector<tokenizer::ToolCall> tool_calls;
  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};

class OutputAssembler {
 public:
  // `chat`: split reasoning and parse tool calls (with `tools` non-null); else text passes through.
  // `in_reasoning`: the prompt opened a <think> block.
  OutputAssembler(bool chat, bool in_reasoning, nlohmann::ordered_json tools);

  MessageDelta Feed(std::string_view text);
  MessageDelta Finish();  // what is held back at the end

 private:
  MessageDelta Route(std::string_view valid_text, bool final);

  bool chat_;
  bool parse_tools_;
  std::string pending_utf8_;  // bytes of a character split across two pieces
  tokenizer::ReasoningParser reasoning_;
  tokenizer::ToolCallParser tools_;
};

}  // namespace clover::server
