// Streaming assembly: UTF-8 characters split across pieces, reasoning and tool calls.
#include "server/output_assembler.h"

#include <gtest/gtest.h>

namespace clover::server {
namespace {

MessageDelta FeedAll(OutputAssembler& a, const std::vector<std::string>& pieces) {
  MessageDelta all;
  auto add = [&all](MessageDelta d) {
    all.reasoning += d.reasoning;
    all.content += d.content;
    for (auto& c : d.tool_calls) all.tool_calls.push_back(c);
  };
  for (const std::string& p : pieces) add(a.Feed(p));
  add(a.Finish());
  return all;
}

TEST(OutputAssemblerTest, HoldsBackASplitUtf8Character) {
  OutputAssembler a(/*chat=*/false, false, nullptr);
  const std::string euro = "\xE2\x82\xAC";
  MessageDelta d1 = a.Feed("a" + euro.substr(0, 2));
  EXPECT_EQ(d1.content, "a");
  MessageDelta d2 = a.Feed(euro.substr(2) + "b");
  EXPECT_EQ(d2.content, euro + "b");
  OutputAssembler broken(false, false, nullptr);
  MessageDelta d3 = FeedAll(broken, {"x\xE2\x82"});
  EXPECT_EQ(d3.content, "x\xEF\xBF\xBD");  // an unfinished character at the end becomes U+FFFD
}

TEST(OutputAssemblerTest, SplitsReasoningAcrossPieces) {
  OutputAssembler a(/*chat=*/true, /*in_reasoning=*/true, nullptr);
  MessageDelta d = FeedAll(a, {"\nadd the col", "umns\n</thi", "nk>\n\nThe answer is 4."});
  EXPECT_EQ(d.reasoning, "add the columns");
  EXPECT_EQ(d.content, "The answer is 4.");
}

TEST(OutputAssemblerTest, ParsesToolCallsOnlyWithTools) {
  const std::string text =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  nlohmann::ordered_json tools = nlohmann::ordered_json::parse(
      R"([{"type": "function", "function": {"name": "get_weather"}}])");
  OutputAssembler with(true, false, tools);
  MessageDelta d = FeedAll(with, {text.substr(0, 20), text.substr(20)});
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(d.tool_calls[0].arguments)["city"], "Paris");
  EXPECT_EQ(d.content, "");
  OutputAssembler without(true, false, nullptr);
  EXPECT_EQ(FeedAll(without, {text}).content, text);
}

}  // namespace
}  // namespace clover::server
