// Streaming stop-string matcher (see stop_strings.h).
#include "decode/stop_strings.h"

#include <algorithm>

namespace clover::decode {
namespace {

// Returns the length of a trailing UTF-8 sequence whose lead byte promises more bytes than follow.
size_t UnfinishedUtf8Tail(std::string_view s) {
  const size_t look = std::min<size_t>(s.size(), 3);
  for (size_t k = 1; k <= look; ++k) {
    const auto c = static_cast<unsigned char>(s[s.size() - k]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = 1;
    if ((c & 0xE0) == 0xC0)
      need = 2;
    else if ((c & 0xF0) == 0xE0)
      need = 3;
    else if ((c & 0xF8) == 0xF0)
      need = 4;
    return need > k ? k : 0;
  }
  return 0;
}

}  // namespace

bool IsStopId(int32_t id, std::span<const int32_t> stop_ids) {
  return std::find(stop_ids.begin(), stop_ids.end(), id) != stop_ids.end();
}

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

StopStringMatcher::Output StopStringMatcher::Append(std::string_view chunk) {
  Output out;
  if (stopped_) return out;
  held_.append(chunk);

  size_t first = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t at = held_.find(s);
    if (at == std::string::npos) continue;
    if (at < first || (at == first && s.size() > out.stop.size())) {
      first = at;
      out.stop = s;
    }
  }
  if (first != std::string::npos) {
    out.text = held_.substr(0, first);
    out.stop_at = released_ + first;
    out.stopped = stopped_ = true;
    held_.clear();
    return out;
  }

  // Everything before the longest suffix that could still begin a stop string is final.
  size_t keep = 0;
  for (const std::string& s : stops_) {
    for (size_t len = std::min(s.size() - 1, held_.size()); len > keep; --len) {
      if (std::string_view(held_).substr(held_.size() - len) ==
          std::string_view(s).substr(0, len)) {
        keep = len;
        break;
      }
    }
  }
  keep = std::max(keep, UnfinishedUtf8Tail(held_));
  out.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  released_ += out.text.size();
  return out;
}

std::string StopStringMatcher::Flush() {
  std::string rest;
  if (!stopped_) rest.swap(held_);
  return rest;
}

}  // namespace clover::decode
