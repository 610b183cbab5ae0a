// Streaming stop-string matcher over emitted UTF-8 text, and the stop-id test.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clover::decode {

// Returns whether `id` is one of `stop_ids`.
bool IsStopId(int32_t id, std::span<const int32_t> stop_ids);

// Finds the earliest stop string in text appended in chunks (one per token or per block), across
// chunk boundaries. Text is released as soon as it cannot be part of a stop string: only a
// suffix that is a proper prefix of some stop string, or an unfinished UTF-8 sequence, is held.
class StopStringMatcher {
 public:
  // Empty strings in `stops` are ignored.
  explicit StopStringMatcher(std::vector<std::string> stops);

  struct Output {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string was found; `text` ends right before it
    std::string stop;      // the stop string found (the longest one starting there)
    size_t stop_at = 0;    // byte offset of the stop in the whole stream (when stopped)
  };

  // Appends `chunk`; after a stop, further chunks are ignored and return empty outputs.
  Output Append(std::string_view chunk);
  // Returns the held text at the end of the stream (nothing after a stop).
  std::string Flush();

  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  size_t released_ = 0;  // bytes returned so far
  bool stopped_ = false;
};

}  // namespace clover::decode
