// Emission of the answer (see answer_stream.h).
#include "decode/answer_stream.h"

#include <utility>

namespace clover::decode {

AnswerStream::AnswerStream(std::vector<int32_t> stop_ids, std::vector<std::string> stop_strings,
                           int64_t max_tokens, TokenTextFn token_text,
                           std::optional<int32_t> think_end_id, bool thinking)
    : stop_ids_(std::move(stop_ids)),
      matcher_(std::move(stop_strings)),
      max_tokens_(max_tokens),
      token_text_(std::move(token_text)),
      think_end_id_(think_end_id),
      thinking_(thinking) {}

void AnswerStream::Finish(FinishReason reason, StepEvents& events) {
  finished_ = true;
  events.finish = reason;
  events.text += matcher_.Flush();
}

size_t AnswerStream::Emit(std::span<const int32_t> tokens, StepEvents& events) {
  size_t accepted = 0;
  for (int32_t t : tokens) {
    if (finished_) break;
    ++accepted;
    ++generated_;
    events.tokens.push_back(t);
    if (thinking_) {
      ++thinking_tokens_;
      if (think_end_id_ && t == *think_end_id_) thinking_ = false;
    } else {
      ++answer_tokens_;
    }
    if (IsStopId(t, stop_ids_)) {
      Finish(FinishReason::kStop, events);
      break;
    }
    StopStringMatcher::Output out = matcher_.Append(token_text_(t));
    events.text += out.text;
    if (out.stopped) {
      Finish(FinishReason::kStop, events);
      break;
    }
    if (generated_ >= max_tokens_) Finish(FinishReason::kLength, events);
  }
  return accepted;
}

}  // namespace clover::decode
