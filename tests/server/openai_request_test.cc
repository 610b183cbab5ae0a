// Request parsing: every field's type and range check names the field; unknown fields pass.
#include "server/openai_request.h"

#include <gtest/gtest.h>

namespace clover::server {
namespace {

using json = nlohmann::json;

std::optional<ApiError> Chat(const std::string& body, ChatRequest* out = nullptr) {
  ChatRequest local;
  return ParseChatRequest(json::parse(body), out ? out : &local);
}

TEST(OpenAiRequestTest, ParsesAFullChatRequest) {
  ChatRequest r;
  auto e = Chat(R"({"model": "m", "messages": [{"role": "developer", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]}],
      "max_completion_tokens": 12, "temperature": 0.5, "top_p": 0.9, "top_k": -1, "min_p": 0.1,
      "seed": 7, "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.1,
      "stop": ["a", ""], "n": 1, "stream": true, "stream_options": {"include_usage": true},
      "response_format": {"type": "text"}, "enable_thinking": false, "ignore_eos": true, "unknown_field": {"x": 1},
      "clover": {"decoder": "ar", "threshold": 0.8, "block_size": 16, "fused_commit": true,
                 "reuse_passes": 5}})",
                &r);
  ASSERT_FALSE(e) << e->message;
  EXPECT_EQ(r.sampling.model, "m");
  EXPECT_EQ(r.sampling.max_tokens, 12);
  EXPECT_FLOAT_EQ(*r.sampling.temperature, 0.5f);
  EXPECT_EQ(r.sampling.top_k, 0);
  EXPECT_EQ(r.sampling.seed, 7u);
  EXPECT_FLOAT_EQ(*r.sampling.penalties.frequency, -0.5f);
  EXPECT_EQ(r.sampling.stop, std::vector<std::string>{"a"});
  EXPECT_TRUE(r.sampling.stream);
  EXPECT_TRUE(r.sampling.include_usage);
  EXPECT_TRUE(r.sampling.ignore_eos);
  EXPECT_EQ(r.sampling.decoder, decode::DecoderKind::kAr);
  EXPECT_EQ(r.sampling.block_size, 16);
  EXPECT_TRUE(r.sampling.fused_commit);
  EXPECT_EQ(r.sampling.reuse_passes, 5);
  EXPECT_EQ(r.messages[0]["role"], "system");
  EXPECT_EQ(r.messages[1]["content"], "Hi there");
  EXPECT_EQ(r.enable_thinking, false);
  EXPECT_EQ(r.template_kwargs["enable_thinking"], false);
  EXPECT_TRUE(r.tools.is_null());
}

TEST(OpenAiRequestTest, SpeculativeDecoderAndDraftRange) {
  ChatRequest r;
  auto e = Chat(R"({"messages": [{"role": "user", "content": "x"}],
      "clover": {"decoder": "speculative", "draft_min": 2, "draft_max": 8, "fused_commit": true}})",
                &r);
  ASSERT_FALSE(e) << e->message;
  EXPECT_EQ(r.sampling.decoder, decode::DecoderKind::kSpeculative);
  EXPECT_EQ(r.sampling.draft_min, 2);
  EXPECT_EQ(r.sampling.draft_max, 8);
  EXPECT_TRUE(r.sampling.fused_commit);
}

TEST(OpenAiRequestTest, ThinkingFromTemplateKwargs) {
  ChatRequest r;
  ASSERT_FALSE(Chat(R"({"messages": [{"role": "user", "content": "x"}],
      "chat_template_kwargs": {"enable_thinking": true, "custom": 3}})", &r));
  EXPECT_EQ(r.enable_thinking, true);
  EXPECT_EQ(r.template_kwargs["custom"], 3);
}

TEST(OpenAiRequestTest, ToolsAndToolCallHistory) {
  ChatRequest r;
  auto e = Chat(R"({"messages": [{"role": "user", "content": "weather?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]})",
                &r);
  ASSERT_FALSE(e) << e->message;
  ASSERT_TRUE(r.tools.is_array());
  EXPECT_EQ(r.messages[1]["content"], "");
  // Arguments become an object so that templates print them with tojson.
  EXPECT_EQ(r.messages[1]["tool_calls"][0]["function"]["arguments"]["city"], "Paris");
  ChatRequest none;
  ASSERT_FALSE(Chat(R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "none",
      "tools": [{"type": "function", "function": {"name": "f"}}]})", &none));
  EXPECT_TRUE(none.tools.is_null());
}

struct BadCase {
  const char* body;
  const char* param;
};

TEST(OpenAiRequestTest, RejectsBadFieldsNamingThem) {
  const BadCase cases[] = {
      {R"({})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": "hi"})", "messages"},
      {R"({"messages": [{"content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "robot", "content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "user"}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})",
       "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})", "messages[0].content[0].text"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})", "temperature"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": 3})", "temperature"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1.5})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "x"}], "top_p": 0})", "top_p"},
      {R"({"messages": [{"role": "user", "content": "x"}], "n": 2})", "n"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stop": 3})", "stop"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stop": ["a", 1]})", "stop"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stream": "yes"})", "stream"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stream_options": {"include_usage": 1}})",
       "stream_options.include_usage"},
      {R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_object"}})",
       "response_format.type"},
      {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true})", "logprobs"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tools": {}})", "tools"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})", "tools[0]"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"})", "tool_choice"},
      {R"({"messages": [{"role": "user", "content": "x"}], "enable_thinking": "no"})", "enable_thinking"},
      {R"({"messages": [{"role": "user", "content": "x"}], "clover": {"decoder": "beam"}})", "clover.decoder"},
      {R"({"messages": [{"role": "user", "content": "x"}], "clover": {"block_size": 12}})", "clover.block_size"},
      {R"({"messages": [{"role": "user", "content": "x"}], "clover": {"threshold": 1.5}})", "clover.threshold"},
      {R"({"messages": [{"role": "user", "content": "x"}], "model": 3})", "model"},
      {R"({"messages": [{"role": "user", "content": "x"}], "clover": {"fused_commit": 1}})", "clover.fused_commit"},
      {R"({"messages": [{"role": "user", "content": "x"}], "clover": {"reuse_passes": -1}})", "clover.reuse_passes"},
      {R"({"messages": [{"role": "user", "content": "x"}], "clover": {"draft_max": 33}})", "clover.draft_max"},
      {R"({"messages": [{"role": "user", "content": "x"}], "clover": {"draft_min": 0}})", "clover.draft_min"},
  };
  for (const BadCase& c : cases) {
    auto e = Chat(c.body);
    ASSERT_TRUE(e) << c.body;
    EXPECT_EQ(e->status, 400) << c.body;
    EXPECT_EQ(e->param, c.param) << c.body;
    EXPECT_EQ(e->type, "invalid_request_error");
    EXPECT_NE(e->message.find(c.param), std::string::npos) << e->message;
  }
}

TEST(OpenAiRequestTest, CompletionPromptShapes) {
  CompletionRequest r;
  ASSERT_FALSE(ParseCompletionRequest(json::parse(R"({"prompt": "abc", "echo": true})"), &r));
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(std::get<std::string>(r.prompts[0]), "abc");
  EXPECT_TRUE(r.echo);
  CompletionRequest many;
  ASSERT_FALSE(ParseCompletionRequest(json::parse(R"({"prompt": ["a", [1, 2], "b"]})"), &many));
  ASSERT_EQ(many.prompts.size(), 3u);
  EXPECT_EQ(std::get<std::vector<int32_t>>(many.prompts[1]), (std::vector<int32_t>{1, 2}));
  CompletionRequest ids;
  ASSERT_FALSE(ParseCompletionRequest(json::parse(R"({"prompt": [5, 6, 7]})"), &ids));
  EXPECT_EQ(std::get<std::vector<int32_t>>(ids.prompts[0]), (std::vector<int32_t>{5, 6, 7}));
  for (const char* bad : {R"({})", R"({"prompt": 3})", R"({"prompt": []})", R"({"prompt": [1, -2]})",
                          R"({"prompt": [[]]})", R"({"prompt": [{"a": 1}]})"}) {
    CompletionRequest x;
    auto e = ParseCompletionRequest(json::parse(bad), &x);
    ASSERT_TRUE(e) << bad;
    EXPECT_EQ(e->param, "prompt") << bad;
  }
}

TEST(OpenAiRequestTest, ErrorJsonShape) {
  const ApiError e = InvalidRequest("n", "'n' must be 1");
  const auto j = e.ToJson();
  EXPECT_EQ(j["error"]["message"], "'n' must be 1");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "n");
  EXPECT_TRUE(j["error"]["code"].is_null());
}

}  // namespace
}  // namespace clover::server
