// Logit processors (see penalties.h).
#include "decode/penalties.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/check.h"

namespace clover::decode {

PenaltyParams ResolvePenalties(const PenaltyOverrides& o, bool is_clover) {
  PenaltyParams p = is_clover ? kCloverReleasePenalties : PenaltyParams{};
  if (o.presence) p.presence = *o.presence;
  if (o.frequency) p.frequency = *o.frequency;
  if (o.repetition) p.repetition = *o.repetition;
  return p;
}

Status ValidatePenaltyParams(const PenaltyParams& p) {
  if (!std::isfinite(p.presence))
    return InvalidArgument("penalties.presence: expected a finite value, found " +
                           std::to_string(p.presence));
  if (!std::isfinite(p.frequency))
    return InvalidArgument("penalties.frequency: expected a finite value, found " +
                           std::to_string(p.frequency));
  if (!(p.repetition > 0.0f) || !std::isfinite(p.repetition))
    return InvalidArgument("penalties.repetition: expected a finite value > 0, found " +
                           std::to_string(p.repetition));
  return Status::Ok();
}

Status ValidateStopPushParams(const StopPushParams& p) {
  if (p.think_start < 0 || p.eos_start < 0)
    return InvalidArgument("stop_push: expected think_start and eos_start >= 0, found " +
                           std::to_string(p.think_start) + " and " + std::to_string(p.eos_start));
  if (p.window < 1)
    return InvalidArgument("stop_push.window: expected >= 1, found " + std::to_string(p.window));
  if (!std::isfinite(p.max_bias))
    return InvalidArgument("stop_push.max_bias: expected a finite value, found " +
                           std::to_string(p.max_bias));
  return Status::Ok();
}

float StopPushBias(int64_t n, int64_t start, const StopPushParams& p) {
  if (n < 0) return 0.0f;
  const double ramp = static_cast<double>(n - start + 1) / static_cast<double>(p.window);
  return static_cast<float>(p.max_bias * std::clamp(ramp, 0.0, 1.0));
}

void TokenHistory::AddPrompt(std::span<const int32_t> ids) {
  for (int32_t id : ids) entries_[id].in_prompt = true;
}

void TokenHistory::AddGenerated(int32_t id) { ++entries_[id].generated; }

void TokenHistory::RemoveGenerated(int32_t id) {
  auto it = entries_.find(id);
  CLOVER_CHECK(it != entries_.end() && it->second.generated > 0);
  if (--it->second.generated == 0 && !it->second.in_prompt) entries_.erase(it);
}

int32_t TokenHistory::GeneratedCount(int32_t id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? 0 : it->second.generated;
}

void TokenHistory::Apply(std::span<float> logits, const PenaltyParams& p) const {
  const bool repetition = p.repetition != 1.0f;
  if (!repetition && p.presence == 0.0f && p.frequency == 0.0f) return;
  for (const auto& [id, e] : entries_) {
    if (id < 0 || static_cast<size_t>(id) >= logits.size()) continue;
    float& l = logits[static_cast<size_t>(id)];
    if (repetition) l = l > 0.0f ? l / p.repetition : l * p.repetition;
    if (e.generated > 0) l -= p.presence + p.frequency * static_cast<float>(e.generated);
  }
}

void SuppressTokens(std::span<float> logits, std::span<const int32_t> ids, int64_t n_valid) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int32_t id : ids) {
    if (id >= 0 && static_cast<size_t>(id) < logits.size())
      logits[static_cast<size_t>(id)] = kNegInf;
  }
  for (size_t i = static_cast<size_t>(std::max<int64_t>(n_valid, 0)); i < logits.size(); ++i)
    logits[i] = kNegInf;
}

}  // namespace clover::decode
