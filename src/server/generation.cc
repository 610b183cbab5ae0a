#include "server/generation.h"

#include <chrono>
#include <random>

#include "decode/registry.h"
#include "tokenizer/reasoning_parser.h"
#include "server/served_model.h"

namespace clover::server {
namespace {

using ojson = nlohmann::ordered_json;

std::string RandomHex(size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* kHex = "0123456789abcdef";
  std::string s(n, '0');
  for (char& c : s) c = kHex[rng() & 15];
  return s;
}

void StartGeneration(const ServedModel& served, const SamplingRequest& s, Endpoint endpoint,
                     Generation* out) {
  out->endpoint = endpoint;
  out->id = (endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-") + RandomHex(24);
  out->created = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  out->model = served.alias;
  out->stream = s.stream;
  out->include_usage = s.include_usage;
}

// Builds one choice's decoder over `prompt`. `prompt_param` names the request field for errors.
std::optional<ApiError> AddChoice(const ServedModel& served, const SamplingRequest& s,
                                  std::vector<int32_t> prompt, bool thinking, ojson tools,
                                  Endpoint endpoint, const std::string& prompt_param,
                                  Clock::time_point arrival, Generation* out) {
  decode::DecodeModelInfo info = served.info;
  if (s.ignore_eos) info.eos_ids.clear();
  decode::DecodeRequest r;
  r.kind = s.decoder.value_or(info.mask_token_id ? decode::DecoderKind::kDiffusion
                                                 : decode::DecoderKind::kAr);
  if (r.kind != decode::DecoderKind::kAr && !info.mask_token_id)
    return InvalidRequest("clover.decoder", std::string("'clover.decoder' is \"") +
                                                decode::DecoderKindName(r.kind) +
                                                "\" but the model has no mask token; use \"ar\"");
  out->decoder = r.kind;
  const int64_t n = static_cast<int64_t>(prompt.size());
  if (n == 0) return InvalidRequest(prompt_param, "the prompt is empty");
  for (int32_t id : prompt)
    if (id < 0 || id >= served.tokenizer.vocab_size())
      return InvalidRequest(prompt_param, "token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                              std::to_string(served.tokenizer.vocab_size() - 1) + ")");
  // A diffusion answer occupies whole blocks, so the room left is rounded down to blocks.
  const int block = s.block_size.value_or(info.block_size);
  int64_t room = served.context - n;
  if (decode::IsBlockDecoder(r.kind)) room = room / block * block;
  if (room < 1)
    return InvalidRequest(prompt_param,
                          "the prompt has " + std::to_string(n) + " tokens but the context is " +
                              std::to_string(served.context) + " tokens" +
                              (decode::IsBlockDecoder(r.kind)
                                   ? ", which leaves no room for one " + std::to_string(block) + "-token block"
                                   : ""),
                          "context_length_exceeded");
  r.prompt = std::move(prompt);
  r.max_tokens = std::min(s.max_tokens.value_or(room), room);
  r.stop_strings = s.stop;
  r.threshold = s.threshold.value_or(r.threshold);
  r.block_size = s.block_size.value_or(0);
  r.sampling = served.sampling_defaults;
  if (s.temperature) r.sampling.temperature = *s.temperature;
  if (s.top_p) r.sampling.top_p = *s.top_p;
  if (s.top_k) r.sampling.top_k = *s.top_k;
  if (s.min_p) r.sampling.min_p = *s.min_p;
  r.sampling.seed = s.seed ? *s.seed : std::random_device{}();
  r.penalties = s.penalties;
  r.thinking = thinking;
  r.fuse_commit = s.fused_commit;
  if (s.frontier_floor) r.frontier.floor = *s.frontier_floor;
  if (s.frontier_target_iters) r.frontier.target_iters = *s.frontier_target_iters;
  if (s.draft_min) r.speculative.draft_min = *s.draft_min;
  if (s.draft_max) r.speculative.draft_max = *s.draft_max;
  if (s.reuse_passes) r.reuse_passes = *s.reuse_passes;

  const tokenizer::Tokenizer* tok = &served.tokenizer;
  auto token_text = [tok](int32_t id) -> std::string {
    Result<std::string_view> b = tok->TokenBytes(id, /*skip_special=*/true);
    return b.ok() ? std::string(*b) : std::string();
  };
  Result<std::unique_ptr<decode::Decoder>> decoder = decode::CreateDecoder(r, info, token_text);
  if (!decoder.ok()) return InvalidRequest("", decoder.status().message());
  const bool chat = endpoint == Endpoint::kChat;
  out->choices.push_back(Choice{
      .job = std::make_shared<Job>(std::move(*decoder), n, arrival),
      .assembler = OutputAssembler(chat, thinking, std::move(tools)),
  });
  return std::nullopt;
}

ojson UsageOf(const Generation& g) {
  int64_t prompt = 0, completion = 0, blocks = 0, passes = 0;
  for (const Choice& c : g.choices) {
    prompt += c.job->prompt_tokens();
    completion += static_cast<int64_t>(c.result.tokens.size());
    blocks += c.result.counters.blocks;
    passes += c.result.counters.passes();
  }
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion},
          {"clover",
           {{"decoder", decode::DecoderKindName(g.decoder)},
            {"blocks", blocks},
            {"passes", passes},
            {"tokens_per_pass", passes == 0 ? 0.0 : static_cast<double>(completion) / passes}}}};
}

ojson ToolCallsJson(const std::vector<tokenizer::ToolCall>& calls, size_t first_index, bool stream) {
  ojson out = ojson::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    ojson call = {{"id", "call_" + RandomHex(24)},
                  {"type", "function"},
                  {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
    if (stream) {
      ojson indexed = {{"index", first_index + i}};
      indexed.update(call);
      call = std::move(indexed);
    }
    out.push_back(std::move(call));
  }
  return out;
}

}  // namespace

std::optional<ApiError> PrepareChat(const ServedModel& served, const ChatRequest& request,
                                    Clock::time_point arrival, Generation* out) {
  StartGeneration(served, request.sampling, Endpoint::kChat, out);
  Result<std::string> rendered = served.chat_template.Render(
      request.messages, request.tools.is_null() ? ojson(nullptr) : request.tools, true,
      request.template_kwargs);
  if (!rendered.ok())
    return InvalidRequest("messages", "the chat template rejected the messages: " +
                                          rendered.status().message());
  const bool thinking = tokenizer::PromptOpensReasoning(*rendered);
  return AddChoice(served, request.sampling, served.tokenizer.Encode(*rendered), thinking,
                   request.tools, Endpoint::kChat, "messages", arrival, out);
}

std::optional<ApiError> PrepareCompletion(const ServedModel& served,
                                          const CompletionRequest& request,
                                          Clock::time_point arrival, Generation* out) {
  StartGeneration(served, request.sampling, Endpoint::kCompletion, out);
  for (const CompletionPrompt& p : request.prompts) {
    std::vector<int32_t> ids;
    std::string text;
    if (const std::string* s = std::get_if<std::string>(&p)) {
      ids = served.tokenizer.Encode(*s);
      text = *s;
    } else {
      ids = std::get<std::vector<int32_t>>(p);
    }
    if (auto e = AddChoice(served, request.sampling, ids, false, nullptr, Endpoint::kCompletion,
                           "prompt", arrival, out))
      return e;
    if (request.echo) {
      if (text.empty()) {
        Result<std::string> decoded = served.tokenizer.Decode(ids);
        if (decoded.ok()) text = *decoded;
      }
      out->choices.back().echo = std::move(text);
    }
  }
  return std::nullopt;
}

MessageDelta Apply(Choice& choice, JobEvent event) {
  MessageDelta delta;
  if (!choice.echo.empty()) {
    delta.content = std::move(choice.echo);
    choice.echo.clear();
  }
  MessageDelta more;
  if (event.done) {
    choice.done = true;
    choice.status = std::move(event.status);
    choice.result = std::move(event.result);
    more = choice.assembler.Finish();
  } else {
    more = choice.assembler.Feed(event.step.text);
  }
  delta.reasoning += more.reasoning;
  delta.content += more.content;
  for (auto& c : more.tool_calls) delta.tool_calls.push_back(std::move(c));
  choice.content += delta.content;
  choice.reasoning += delta.reasoning;
  choice.tool_calls.insert(choice.tool_calls.end(), delta.tool_calls.begin(), delta.tool_calls.end());
  return delta;
}

std::string FinishReason(const Choice& choice) {
  if (!choice.tool_calls.empty()) return "tool_calls";
  if (choice.result.finish == decode::FinishReason::kLength) return "length";
  return "stop";
}

ojson ChunkJson(const Generation& g, size_t index, const MessageDelta& delta, bool first,
                bool finish) {
  const Choice& choice = g.choices[index];
  ojson c;
  if (g.endpoint == Endpoint::kChat) {
    ojson d = ojson::object();
    if (first) d["role"] = "assistant";
    if (first || !delta.content.empty()) d["content"] = delta.content;
    if (!delta.reasoning.empty()) d["reasoning_content"] = delta.reasoning;
    if (!delta.tool_calls.empty())
      d["tool_calls"] = ToolCallsJson(delta.tool_calls, choice.tool_calls.size() - delta.tool_calls.size(), true);
    c = {{"index", index}, {"delta", d}, {"logprobs", nullptr}};
  } else {
    c = {{"index", index}, {"text", delta.content}, {"logprobs", nullptr}};
  }
  c["finish_reason"] = finish ? ojson(FinishReason(choice)) : ojson(nullptr);
  return {{"id", g.id},
          {"object", g.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", g.created},
          {"model", g.model},
          {"choices", ojson::array({c})}};
}

ojson UsageChunkJson(const Generation& g) {
  return {{"id", g.id},
          {"object", g.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", g.created},
          {"model", g.model},
          {"choices", ojson::array()},
          {"usage", UsageOf(g)}};
}

ojson ResponseJson(const Generation& g) {
  ojson choices = ojson::array();
  for (size_t i = 0; i < g.choices.size(); ++i) {
    const Choice& c = g.choices[i];
    if (g.endpoint == Endpoint::kChat) {
      ojson msg = {{"role", "assistant"}};
      msg["content"] = c.content.empty() && !c.tool_calls.empty() ? ojson(nullptr) : ojson(c.content);
      if (!c.reasoning.empty()) msg["reasoning_content"] = c.reasoning;
      if (!c.tool_calls.empty()) msg["tool_calls"] = ToolCallsJson(c.tool_calls, 0, false);
      choices.push_back({{"index", i}, {"message", msg}, {"logprobs", nullptr},
                         {"finish_reason", FinishReason(c)}});
    } else {
      choices.push_back({{"index", i}, {"text", c.content}, {"logprobs", nullptr},
                         {"finish_reason", FinishReason(c)}});
    }
  }
  return {{"id", g.id},
          {"object", g.endpoint == Endpoint::kChat ? "chat.completion" : "text_completion"},
          {"created", g.created},
          {"model", g.model},
          {"choices", choices},
          {"usage", UsageOf(g)}};
}

}  // namespace clover::server
