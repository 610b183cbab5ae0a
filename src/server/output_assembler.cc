#include "server/output_assembler.h"

#include "tokenizer/utf8.h"

namespace clover::server {

OutputAssembler::OutputAssembler(bool chat, bool in_reasoning, nlohmann::ordered_json tools)
    : chat_(chat),
      parse_tools_(chat && !tools.is_null()),
      reasoning_(in_reasoning),
      tools_(std::move(tools)) {}

MessageDelta OutputAssembler::Route(std::string_view valid_text, bool final) {
  MessageDelta out;
  if (!chat_) {
    out.content = std::string(valid_text);
    return out;
  }
  tokenizer::ReasoningDelta r = reasoning_.Feed(valid_text);
  if (final) {
    tokenizer::ReasoningDelta rest = reasoning_.Finish();
    r.reasoning += rest.reasoning;
    r.content += rest.content;
  }
  out.reasoning = std::move(r.reasoning);
  if (!parse_tools_) {
    out.content = std::move(r.content);
    return out;
  }
  tokenizer::ToolCallDelta t = tools_.Feed(r.content);
  out.content = std::move(t.content);
  out.tool_calls = std::move(t.calls);
  if (final) {
    tokenizer::ToolCallDelta rest = tools_.Finish();
    out.content += rest.content;
    for (auto& c : rest.calls) out.tool_calls.push_back(std::move(c));
  }
  return out;
}

MessageDelta OutputAssembler::Feed(std::string_view text) {
  pending_utf8_ += text;
  const size_t cut = tokenizer::CompleteUtf8Prefix(pending_utf8_);
  const std::string valid = tokenizer::ToValidUtf8(std::string_view(pending_utf8_).substr(0, cut));
  pending_utf8_.erase(0, cut);
  return Route(valid, false);
}

MessageDelta OutputAssembler::Finish() {
  const std::string rest = tokenizer::ToValidUtf8(pending_utf8_);
  pending_utf8_.clear();
  return Route(rest, true);
}

}  // namespace clover::server
