// Parses Qwen tool calls out of generated content, incrementally: the JSON form
// <tool_call>{"name": ..., "arguments": {...}}</tool_call> (Qwen3) and the XML-like form
// <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call> (Qwen3.5/3.6).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace clover::tokenizer {

// One call in OpenAI shape: `arguments` is a JSON object serialized as a string.
struct ToolCall {
  std::string name;
  std::string arguments;
};

struct ToolCallDelta {
  std::string content;          // text outside tool-call blocks
  std::vector<ToolCall> calls;  // calls completed by this chunk
};

class ToolCallParser {
 public:
  // `tools`: the request's OpenAI tool list (or null). It types XML parameter values: a
  // parameter declared "string" stays a string, others are read as JSON when they parse.
  explicit ToolCallParser(nlohmann::ordered_json tools = nullptr);

  // Returns the content and completed calls `text` adds; a tag split across chunks is held
  // back. A block that does not parse is passed through as content.
  ToolCallDelta Feed(std::string_view text);
  // Returns what is held back; an unterminated block is parsed if it is complete enough,
  // else returned as content.
  ToolCallDelta Finish();

  // Returns the call in one block body (the text between the tags), or false.
  bool ParseBlock(std::string_view body, ToolCall* call) const;

 private:
  bool ParameterIsString(const std::string& function, const std::string& parameter) const;

  nlohmann::ordered_json tools_;
  std::string buffer_;
  bool inside_ = false;
};

}  // namespace clover::tokenizer
