// AppendCapture: what an append group records so that the sequence can afterwards be cut back to
// the group's first rows without running them again — the rollback of a self-speculative verify
// (clover-decoding.md §9.2 step 4).
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "kernels/kernel_context.h"
#include "model/config.h"

namespace clover::model {

class SequenceState;

// One GDN layer: its states before the group's rows and every row's delta-rule inputs, enough to
// rebuild the states after any prefix of the rows. Attention layers need nothing: their rows
// past the new length are simply not read again.
struct GdnRowCapture {
  std::vector<float> conv_before;       // [conv_kernel - 1][conv_dim]
  std::vector<float> recurrent_before;  // [hv][dk][dv]
  std::vector<float> pre_conv;          // [rows][conv_dim]: the causal conv's inputs
  std::vector<float> qkv;               // [rows][conv_dim]: conv output, q and k l2-normalised
  std::vector<float> gate;              // [rows][hv]: log-decay g
  std::vector<float> beta;              // [rows][hv]
};

// Filled by Model::Forward for an AppendGroup whose `capture` is set; read by
// Model::TruncateAppend. Reusable: buffers keep their capacity between passes.
struct AppendCapture {
  const SequenceState* state = nullptr;  // the sequence whose append was captured
  int64_t first_pos = 0;
  int64_t rows = 0;
  std::vector<GdnRowCapture> layers;  // [model layer]; empty vectors for attention layers
};

// Model::TruncateAppend's work: rebuilds every GDN layer's states after the first `keep_rows`
// captured rows (the delta rule replayed token by token from the captured inputs, the conv state
// taken from the captured conv inputs) and sets the length.
Status TruncateCapturedAppend(const kernels::KernelContext& kc, const ModelConfig& config,
                              SequenceState& state, const AppendCapture& capture,
                              int64_t keep_rows);

}  // namespace clover::model
