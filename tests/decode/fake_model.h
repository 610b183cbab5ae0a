// A fake model and a driver loop for decoder tests: plays the scheduler and Model::Forward, and
// records every group so tests can assert clover-spec.md §5 I3-I5.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "decode/decoder.h"

namespace clover::decode::testing {

struct FakeModel {
  int64_t vocab = 0;
  // Causal logits predicting the token after `context`.
  std::function<std::vector<float>(std::span<const int32_t> context)> causal;
  // Preview logits of block row `row` (`block` holds fixed tokens or the mask id) after the
  // committed `context`.
  std::function<std::vector<float>(std::span<const int32_t> context, std::span<const int32_t> block,
                                   int row)>
      preview;
};

// Returns `vocab` zeros with `margin` at `token`.
std::vector<float> Peaked(int64_t vocab, int32_t token, float margin);

struct PreviewRecord {
  int64_t position = 0;
  std::vector<int32_t> tokens;
  std::vector<int> logit_rows;
};

struct Trace {
  std::vector<int32_t> state;    // the sequence: Append tokens in order, discarded rows removed
  std::vector<int32_t> emitted;  // every event token
  std::string text;
  std::optional<FinishReason> finish;
  std::vector<PreviewRecord> previews;
  std::vector<std::vector<int32_t>> appends;  // each Append group's tokens
  int64_t committed_events = 0;               // sum of StepEvents::committed
  int64_t discarded = 0;                      // rows cut off again (StepEvents::discarded)
};

// Runs `decoder` to the end against `model`. Fails (InvalidArgument) when a group's position is
// not the committed length, when a finish is reported twice, when the events' committed counts
// disagree with the appended rows or when `max_steps` is exceeded.
Result<Trace> Drive(Decoder& decoder, const FakeModel& model, int max_steps = 100000);

// Passes every call through to `inner` and records what went by: the groups and events as a
// Trace (so CheckInvariants applies to real forwards), every preview group whole, every consumed
// logit, and how many previews reused the preview cache.
class RecordingDecoder : public Decoder {
 public:
  explicit RecordingDecoder(Decoder& inner) : inner_(inner) {}
  std::vector<RowGroup> NextGroups() override { return last_ = inner_.NextGroups(); }
  Result<StepEvents> Consume(std::span<const float> logits) override;
  bool finished() const override { return inner_.finished(); }
  const DecodeCounters& counters() const override { return inner_.counters(); }

  Trace trace;
  std::vector<RowGroup> preview_groups;
  std::vector<float> consumed;
  int reuse_passes = 0;

 private:
  Decoder& inner_;
  std::vector<RowGroup> last_;
};

// Returns "" when the trace satisfies I3 (mask id never emitted or appended), I4 (a row fixed in a
// preview keeps its token in every later preview of the block) and I5 (every preview of a block
// has strictly more fixed rows than the one before), else a description of the first violation.
std::string CheckInvariants(const Trace& trace, int32_t mask_id);

}  // namespace clover::decode::testing
