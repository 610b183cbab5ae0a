// From a parsed OpenAI request to scheduler jobs (template, tokenizer, context limits, decoder
// settings), and from the jobs' events to OpenAI response objects.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/openai_request.h"
#include "server/output_assembler.h"
#include "server/scheduler.h"

namespace clover::server {

struct ServedModel;

enum class Endpoint { kChat, kCompletion };

// One choice of a response: its job, the assembler of its text, and what it produced so far.
struct Choice {
  std::shared_ptr<Job> job;
  OutputAssembler assembler;
  std::string echo;  // completions with echo: the prompt text, sent first
  // Accumulated output (non-streaming responses and the final usage).
  std::string content, reasoning;
  std::vector<tokenizer::ToolCall> tool_calls;
  bool done = false;
  Status status;
  decode::GenerateResult result;
};

// A request ready to submit: its choices (one per prompt) and the response's identity.
struct Generation {
  Endpoint endpoint = Endpoint::kChat;
  std::string id;       // chatcmpl-… / cmpl-…
  int64_t created = 0;  // Unix seconds
  std::string model;
  decode::DecoderKind decoder = decode::DecoderKind::kDiffusion;
  bool stream = false;
  bool include_usage = false;
  std::vector<Choice> choices;
};

// Renders, tokenizes and checks the request against `served`; fills `out` with unsubmitted jobs.
std::optional<ApiError> PrepareChat(const ServedModel& served, const ChatRequest& request,
                                    Clock::time_point arrival, Generation* out);
std::optional<ApiError> PrepareCompletion(const ServedModel& served,
                                          const CompletionRequest& request,
                                          Clock::time_point arrival, Generation* out);

// Folds a job event into its choice; returns the delta to stream (empty for none).
MessageDelta Apply(Choice& choice, JobEvent event);

// Response objects (OpenAI shapes). `finish` chunks carry the choice's finish_reason.
nlohmann::ordered_json ChunkJson(const Generation& g, size_t index, const MessageDelta& delta,
                                 bool first, bool finish);
nlohmann::ordered_json UsageChunkJson(const Generation& g);
nlohmann::ordered_json ResponseJson(const Generation& g);

// "stop", "length" or "tool_calls".
std::string FinishReason(const Choice& choice);

}  // namespace clover::server
