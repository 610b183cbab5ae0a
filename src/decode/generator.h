// Generator: drives one Decoder against the CPU model (a BatchRunner of one sequence) and keeps
// the sequence state it ends with.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "decode/batch_runner.h"
#include "decode/decoder.h"
#include "model/model.h"

namespace clover::decode {

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
  BatchRunner runner_;
  model::SequenceState state_;
};

}  // namespace clover::decode
