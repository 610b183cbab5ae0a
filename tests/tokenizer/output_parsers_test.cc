// Reasoning and tool-call parsers, whole and streamed in every chunking.
#include <gtest/gtest.h>

#include "tokenizer/reasoning_parser.h"
#include "tokenizer/tool_call_parser.h"

namespace clover::tokenizer {
namespace {

// Feeds `text` in chunks of `n` bytes and joins the deltas.
ReasoningDelta StreamReasoning(const std::string& text, size_t n, bool in_reasoning) {
  ReasoningParser p(in_reasoning);
  ReasoningDelta all;
  for (size_t i = 0; i < text.size(); i += n) {
    ReasoningDelta d = p.Feed(std::string_view(text).substr(i, n));
    EXPECT_EQ(d.reasoning.find('<'), std::string::npos) << "partial tag leaked at chunk " << n;
    all.reasoning += d.reasoning;
    all.content += d.content;
  }
  ReasoningDelta d = p.Finish();
  all.reasoning += d.reasoning;
  all.content += d.content;
  return all;
}

TEST(ReasoningParser, SplitsThinkBlockInAnyChunking) {
  const std::string text = "<think>\nLet me think.\nOK.\n</think>\n\nThe answer is 4.";
  for (size_t n = 1; n <= text.size(); ++n) {
    ReasoningDelta d = StreamReasoning(text, n, false);
    EXPECT_EQ(d.reasoning, "Let me think.\nOK.") << n;
    EXPECT_EQ(d.content, "The answer is 4.") << n;
  }
}

TEST(ReasoningParser, PromptOpenedThink) {
  const std::string text = "Reasoning here.\n</think>\n\nDone";
  for (size_t n = 1; n <= text.size(); ++n) {
    ReasoningDelta d = StreamReasoning(text, n, true);
    EXPECT_EQ(d.reasoning, "Reasoning here.") << n;
    EXPECT_EQ(d.content, "Done") << n;
  }
}

TEST(ReasoningParser, PromptOpensReasoningOnlyWhenTheLastThinkIsOpen) {
  EXPECT_TRUE(PromptOpensReasoning("<|im_start|>assistant\n<think>\n"));
  EXPECT_FALSE(PromptOpensReasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  EXPECT_FALSE(PromptOpensReasoning("<|im_start|>assistant\n"));
  EXPECT_TRUE(PromptOpensReasoning("<think>a</think> b <think>"));
}

TEST(ReasoningParser, NoThinkBlockIsAllContent) {
  ReasoningDelta d = ReasoningParser::Split("Hello <b>there</b>");
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "Hello <b>there</b>");
  ReasoningDelta unfinished = ReasoningParser::Split("<think>still thinking", false);
  EXPECT_EQ(unfinished.reasoning, "still thinking");
  EXPECT_EQ(unfinished.content, "");
}

ToolCallDelta StreamTools(const std::string& text, size_t n, const nlohmann::ordered_json& tools) {
  ToolCallParser p(tools);
  ToolCallDelta all;
  for (size_t i = 0; i < text.size(); i += n) {
    ToolCallDelta d = p.Feed(std::string_view(text).substr(i, n));
    EXPECT_EQ(d.content.find("<tool"), std::string::npos) << "partial tag leaked at chunk " << n;
    all.content += d.content;
    for (auto& c : d.calls) all.calls.push_back(c);
  }
  ToolCallDelta d = p.Finish();
  all.content += d.content;
  for (auto& c : d.calls) all.calls.push_back(c);
  return all;
}

TEST(ToolCallParser, Qwen3JsonForm) {
  const std::string text =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", "
      "\"days\": 3}}\n</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
  for (size_t n = 1; n <= text.size(); n += 3) {
    ToolCallDelta d = StreamTools(text, n, nullptr);
    EXPECT_EQ(d.content, "Let me check.\n\n") << n;
    ASSERT_EQ(d.calls.size(), 2u) << n;
    EXPECT_EQ(d.calls[0].name, "get_weather");
    EXPECT_EQ(nlohmann::json::parse(d.calls[0].arguments), nlohmann::json({{"city", "Paris"}, {"days", 3}}));
    EXPECT_EQ(d.calls[1].name, "now");
    EXPECT_EQ(d.calls[1].arguments, "{}");
  }
}

TEST(ToolCallParser, Qwen35XmlFormTypedBySchema) {
  const auto tools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {"name": "f",
      "parameters": {"type": "object", "properties": {"code": {"type": "string"},
      "n": {"type": "integer"}, "opts": {"type": "object"}}}}}])");
  const std::string text =
      "<tool_call>\n<function=f>\n<parameter=code>\n123\n</parameter>\n<parameter=n>\n7\n"
      "</parameter>\n<parameter=opts>\n{\"a\": [1, 2]}\n</parameter>\n</function>\n</tool_call>";
  for (size_t n = 1; n <= text.size(); n += 2) {
    ToolCallDelta d = StreamTools(text, n, tools);
    EXPECT_EQ(d.content, "") << n;
    ASSERT_EQ(d.calls.size(), 1u) << n;
    EXPECT_EQ(d.calls[0].name, "f");
    EXPECT_EQ(d.calls[0].arguments, R"({"code":"123","n":7,"opts":{"a":[1,2]}})");
  }
}

TEST(ToolCallParser, MalformedBlockStaysContent) {
  ToolCallParser p;
  ToolCallDelta d = p.Feed("a<tool_call>{not json}</tool_call>b");
  ToolCallDelta f = p.Finish();
  EXPECT_TRUE(d.calls.empty());
  EXPECT_EQ(d.content + f.content, "a<tool_call>{not json}</tool_call>b");
}

}  // namespace
}  // namespace clover::tokenizer
