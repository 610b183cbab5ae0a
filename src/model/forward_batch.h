// ForwardBatch: the row groups of one forward call (engine-flow.md "One forward call").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/append_capture.h"
#include "model/preview_cache.h"
#include "model/sequence_state.h"

namespace clover::model {

// New causal positions of one sequence; the pass writes their KV rows and advances the GDN
// states (prefill, decode, commit are all this). `first_pos` must equal `state->length()`.
struct AppendGroup {
  SequenceState* state = nullptr;
  std::span<const int32_t> tokens;
  int64_t first_pos = 0;
  // Indices into `tokens` (ascending) whose logits are returned.
  std::vector<int64_t> logit_rows;
  // When set, the pass records what Model::TruncateAppend needs to cut this group back to a
  // prefix of its rows afterwards (speculative verify).
  AppendCapture* capture = nullptr;
};

// A read-only pass over a block after the committed state (diffusion preview, clover-spec.md):
// the state is const, so the committed sequence cannot be modified through this group.
struct PreviewGroup {
  const SequenceState* state = nullptr;
  std::span<const int32_t> tokens;
  int64_t first_pos = 0;
  std::vector<int64_t> logit_rows;
  // Expert budget + live-row reuse (clover-decoding.md §8, §9.1): none unless a cache is given.
  PreviewReuse reuse = {};
};

struct ForwardBatch {
  std::vector<AppendGroup> appends;
  std::vector<PreviewGroup> previews;
};

// Logits of the requested rows: appends in order, then previews in order, each group's rows in
// `logit_rows` order.
struct ForwardLogits {
  int64_t vocab = 0;
  int64_t n_rows = 0;
  std::vector<float> data;  // [n_rows][vocab]
  // Per layer: distinct routed experts that ran (append pass + preview pass).
  std::vector<int> distinct_experts;
  // Per preview group, per layer: the block coreset's kept experts, descending votes.
  std::vector<std::vector<std::vector<int32_t>>> coresets;
  const float* row(int64_t i) const { return data.data() + i * vocab; }
};

}  // namespace clover::model
