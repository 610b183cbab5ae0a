// BatchRunner: drives many decoders at once against one model, putting the next row group of
// every active sequence into a single Model::Forward per step (engine-flow.md "One forward call":
// rows of several requests' blocks share one pass over the weights).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/status.h"
#include "decode/decoder.h"
#include "model/model.h"

namespace clover::decode {

struct GenerateResult {
  std::vector<int32_t> tokens;         // every emitted token, in order
  std::string text;                    // every emitted text piece joined
  std::optional<FinishReason> finish;  // unset when cancelled or failed
  bool cancelled = false;
  DecodeCounters counters;
  int64_t forward_calls = 0;  // Model::Forward calls this sequence took part in after its prefill
  // Per layer: distinct routed experts summed over those forward calls (divide by forward_calls
  // for the mean per pass). In a shared forward the count is the whole batch's.
  std::vector<int64_t> distinct_experts_sum;
  double seconds = 0.0;  // wall time from Add() to the finish, prefill included
};

// Called after every Consume() of that sequence with its events.
using StepCallback = std::function<void(const StepEvents& events)>;

class BatchRunner {
 public:
  using SequenceId = uint64_t;

  // A sequence that left the runner: finished, cancelled or failed.
  struct Done {
    SequenceId id = 0;
    Status status;  // the model's or the decoder's error; Ok when finished or cancelled
    GenerateResult result;
    model::SequenceState state;  // prompt + committed tokens, for reuse or inspection
  };

  // `model` must outlive the runner.
  explicit BatchRunner(const model::Model& model);
  ~BatchRunner();

  // Adds a sequence starting from an empty state. `decoder` must outlive its time in the runner.
  SequenceId Add(Decoder& decoder, StepCallback on_step = nullptr);
  // Takes the sequence out before the next step (result.cancelled); its KV pages are freed.
  // Returns false when the id is not active.
  bool Cancel(SequenceId id);

  // Runs one forward over the next group of every active sequence — two when a decoder asked for
  // a commit followed by a preview (fused commit, clover-decoding.md §6.1: the preview sees the
  // committed rows layer by layer) — and feeds each decoder whose
  // groups are all done. Returns the sequences that left the runner in this step (and those
  // cancelled since the last one). Errors are per sequence: a forward that fails is retried group
  // by group so that only the sequences at fault fail.
  std::vector<Done> Step();

  size_t active() const { return sequences_.size(); }
  bool empty() const { return sequences_.empty(); }

 private:
  struct Sequence;
  // Runs `members`' current groups (two for a fused commit + preview) in one forward; on success
  // hands each its logits and advances its group cursor.
  Status ForwardGroups(const std::vector<Sequence*>& members);
  Done Finish(std::unique_ptr<Sequence> seq, Status status);

  const model::Model& model_;
  model::ForwardScratch scratch_;
  std::vector<std::unique_ptr<Sequence>> sequences_;
  std::vector<Done> cancelled_;
  SequenceId next_id_ = 1;
};

}  // namespace clover::decode
