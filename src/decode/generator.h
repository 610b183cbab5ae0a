// Generator: drives one Decoder against the CPU model on a sequence state it owns (prefill,
// previews, commits) and streams what the decoder emits.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "decode/decoder.h"
#include "model/model.h"

namespace clover::decode {

struct GenerateResult {
  std::vector<int32_t> tokens;         // every emitted token, in order
  std::string text;                    // every emitted text piece joined
  std::optional<FinishReason> finish;  // unset when cancelled
  bool cancelled = false;
  DecodeCounters counters;
  int64_t forward_calls = 0;  // Model::Forward calls after the prefill
  // Per layer: distinct routed experts summed over the forward calls after the prefill (divide by
  // forward_calls for the mean per pass).
  std::vector<int64_t> distinct_experts_sum;
  double seconds = 0.0;  // wall time of the whole generation, prefill included
};

// Called after every Consume() with its events (text is cut at stop strings by the decoder).
using StepCallback = std::function<void(const StepEvents& events)>;

class Generator {
 public:
  // `model` must outlive the generator.
  explicit Generator(const model::Model& model);

  // Runs `decoder` from an empty sequence to its finish: each NextGroups() group becomes one
  // Model::Forward (kAppend -> AppendGroup, which writes the state; kPreview -> PreviewGroup,
  // which reads it only), the requested logits go to Consume(). `cancel`, when set between two
  // passes, stops early (result.cancelled). Errors of the model or the decoder are returned.
  Result<GenerateResult> Run(Decoder& decoder, const StepCallback& on_step = nullptr,
                             const std::atomic<bool>* cancel = nullptr);

  // The sequence after the last Run (prompt + committed tokens).
  const model::SequenceState& state() const { return state_; }

 private:
  const model::Model& model_;
  model::SequenceState state_;
  model::ForwardScratch scratch_;
};

}  // namespace clover::decode
