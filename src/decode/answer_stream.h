// The answer as it is emitted: stop ids, stop strings, max_tokens, thinking/answer counters.
// Shared by the AR and the block-diffusion decoder (clover-decoding.md §5, §11).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "decode/decoder.h"
#include "decode/stop_strings.h"

namespace clover::decode {

class AnswerStream {
 public:
  // `stop_ids` = model EOS ids + request stop ids. `think_end_id` switches thinking to answer.
  AnswerStream(std::vector<int32_t> stop_ids, std::vector<std::string> stop_strings,
               int64_t max_tokens, TokenTextFn token_text, std::optional<int32_t> think_end_id,
               bool thinking);

  // Accepts `tokens` in order until a stop id (accepted, no text), a stop string (accepted up to
  // the token completing it, text cut before it) or max_tokens; appends them and their text to
  // `events` and sets events.finish on the finish. Returns how many tokens were accepted.
  size_t Emit(std::span<const int32_t> tokens, StepEvents& events);

  const std::vector<int32_t>& stop_ids() const { return stop_ids_; }
  bool finished() const { return finished_; }
  int64_t remaining() const { return max_tokens_ - generated_; }
  int64_t generated() const { return generated_; }
  bool thinking() const { return thinking_; }
  int64_t thinking_tokens() const { return thinking_tokens_; }
  int64_t answer_tokens() const { return answer_tokens_; }

 private:
  void Finish(FinishReason reason, StepEvents& events);

  std::vector<int32_t> stop_ids_;
  StopStringMatcher matcher_;
  int64_t max_tokens_;
  TokenTextFn token_text_;
  std::optional<int32_t> think_end_id_;
  bool thinking_;
  bool finished_ = false;
  int64_t generated_ = 0;
  int64_t thinking_tokens_ = 0;
  int64_t answer_tokens_ = 0;
};

}  // namespace clover::decode
