// Logit processors: token suppression, presence/frequency/repetition penalties over a token
// history, and the gradual </think> / EOS stop push (clover-spec.md §4 Q6, Q7).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>

#include "core/status.h"

namespace clover::decode {

// presence/frequency: OpenAI semantics, `l -= presence * [count > 0] + frequency * count` over
// generated tokens. repetition: CTRL/HF semantics over prompt + generated, `l /= r` if l > 0 else
// `l *= r`, each id once. Neutral values: 0, 0, 1.
struct PenaltyParams {
  float presence = 0.0f;
  float frequency = 0.0f;
  float repetition = 1.0f;
};

// Per-field request overrides; unset fields take the model's defaults (ResolvePenalties).
struct PenaltyOverrides {
  std::optional<float> presence;
  std::optional<float> frequency;
  std::optional<float> repetition;
};

// Clover release settings (clover-decoding.md §10.1, [RELEASE]); applied only to Clover models.
inline constexpr PenaltyParams kCloverReleasePenalties{0.9f, 0.0f, 1.05f};

// Returns the overrides on top of kCloverReleasePenalties for Clover, on top of neutral values
// otherwise.
PenaltyParams ResolvePenalties(const PenaltyOverrides& overrides, bool is_clover);

// Returns InvalidArgument naming the field when a value is outside its range (repetition > 0).
Status ValidatePenaltyParams(const PenaltyParams& params);

// clover-spec.md §4 Q7: additive bias `max_bias * clamp((n - start + 1) / window, 0, 1)`.
struct StopPushParams {
  bool enabled = false;
  int64_t think_start = 4096;  // thinking tokens before the </think> push starts
  int64_t eos_start = 8192;    // answer tokens before the EOS push starts
  int64_t window = 1024;       // W: tokens for the bias to reach max_bias
  float max_bias = 10.0f;      // B_max, in logits
};

// The release stop push: on, with the spec's four numbers.
inline constexpr StopPushParams kCloverReleaseStopPush{true, 4096, 8192, 1024, 10.0f};

Status ValidateStopPushParams(const StopPushParams& params);

// Returns the bias for the token at 0-based index `n` of its counter (0 when n < 0).
float StopPushBias(int64_t n, int64_t start, const StopPushParams& params);

// History of clover-spec.md §4 Q6: prompt ids (repetition only) plus generated ids with counts
// (committed answer + rows fixed so far in the current block). In-block rows are added when fixed
// and removed when discarded, each O(1).
class TokenHistory {
 public:
  // Adds prompt ids to the repetition set.
  void AddPrompt(std::span<const int32_t> ids);
  // Adds one generated occurrence of `id`.
  void AddGenerated(int32_t id);
  // Removes one generated occurrence of `id`; a CLOVER_CHECK failure if none is recorded.
  void RemoveGenerated(int32_t id);
  // Returns how often `id` was generated.
  int32_t GeneratedCount(int32_t id) const;

  // Applies `params` to `logits` in place: repetition first, then presence/frequency (vLLM's
  // order). Ids outside the row are ignored.
  void Apply(std::span<float> logits, const PenaltyParams& params) const;

 private:
  struct Entry {
    int32_t generated = 0;
    bool in_prompt = false;
  };
  std::unordered_map<int32_t, Entry> entries_;
};

// Sets every id in `ids` and every id >= `n_valid` to -inf (the mask token, ids past the
// tokenizer in a padded vocabulary).
void SuppressTokens(std::span<float> logits, std::span<const int32_t> ids, int64_t n_valid);

}  // namespace clover::decode
