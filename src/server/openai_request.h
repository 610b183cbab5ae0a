// Parsing and validation of OpenAI request bodies (chat completions, completions) into plain
// structs. Unknown fields are ignored, as OpenAI does; a known field of the wrong type or out of
// range is a 400 naming it (docs/server.md lists every field).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/decoder.h"
#include "server/api_error.h"

namespace clover::server {

// Fields shared by both endpoints.
struct SamplingRequest {
  std::string model;                   // "" = the served model
  std::optional<int64_t> max_tokens;   // max_tokens / max_completion_tokens
  std::optional<float> temperature;    // unset: the model's generation defaults
  std::optional<float> top_p;
  std::optional<int> top_k;
  std::optional<float> min_p;
  std::optional<uint64_t> seed;
  decode::PenaltyOverrides penalties;  // presence / frequency / repetition
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool ignore_eos = false;     // vLLM's extension: generate until max_tokens or a stop string
  // The "clover" extension object.
  std::optional<decode::DecoderKind> decoder;
  std::optional<double> threshold;
  std::optional<int> block_size;
  bool fused_commit = false;
  std::optional<double> frontier_floor;       // decoder "frontier" only
  std::optional<int> frontier_target_iters;
  std::optional<int> draft_min;  // decoder "speculative" only
  std::optional<int> draft_max;
  std::optional<int> reuse_passes;  // block decoders: expert budget + live-row reuse, 0 = off
};

struct ChatRequest {
  SamplingRequest sampling;
  // Messages normalised for the chat template: content-part arrays joined into strings,
  // "developer" renamed "system", null assistant content made "".
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;  // null when none are offered (or tool_choice is "none")
  std::optional<bool> enable_thinking;  // top level, else chat_template_kwargs
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
};

// One prompt of /v1/completions: text, or token ids.
using CompletionPrompt = std::variant<std::string, std::vector<int32_t>>;

struct CompletionRequest {
  SamplingRequest sampling;
  std::vector<CompletionPrompt> prompts;  // one choice each, in order
  bool echo = false;
};

// Each returns nullopt and fills `out`, or the error to send.
std::optional<ApiError> ParseChatRequest(const nlohmann::json& body, ChatRequest* out);
std::optional<ApiError> ParseCompletionRequest(const nlohmann::json& body, CompletionRequest* out);

}  // namespace clover::server
