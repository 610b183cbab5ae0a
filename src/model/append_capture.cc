// Rollback of a captured append (see append_capture.h).
#include "model/append_capture.h"

#include <algorithm>
#include <string>

#include "model/gdn_layer.h"
#include "model/sequence_state.h"

namespace clover::model {

Status TruncateCapturedAppend(const kernels::KernelContext& kc, const ModelConfig& config,
                              SequenceState& state, const AppendCapture& capture,
                              int64_t keep_rows) {
  if (capture.state != &state || state.length() != capture.first_pos + capture.rows) {
    return FailedPrecondition(
        "truncate: the capture does not describe this sequence's last append (sequence length " +
        std::to_string(state.length()) + ", captured rows [" + std::to_string(capture.first_pos) +
        ", " + std::to_string(capture.first_pos + capture.rows) + "))");
  }
  if (keep_rows < 0 || keep_rows > capture.rows) {
    return InvalidArgument("truncate: keep_rows " + std::to_string(keep_rows) +
                           " is outside [0, " + std::to_string(capture.rows) + "]");
  }
  if (keep_rows == capture.rows) return Status::Ok();

  const int64_t conv_dim = config.conv_dim();
  const int64_t history = config.conv_kernel - 1;
  std::vector<float> discarded_out(static_cast<size_t>(keep_rows) * config.value_dim());
  for (int il = 0; il < config.n_layers; ++il) {
    if (config.layer_kinds[il] != LayerKind::kGatedDeltaNet) continue;
    const GdnRowCapture& c = capture.layers[il];
    float* recurrent = state.recurrent_state(il);
    std::copy(c.recurrent_before.begin(), c.recurrent_before.end(), recurrent);
    if (keep_rows > 0) {
      // Token by token: the AR path's scan, so a truncated verify leaves the state an AR decode
      // of the same tokens would have.
      kernels::DeltaRuleRecurrent(
          kc, GdnDeltaRuleArgs(config, keep_rows, c.qkv.data(), c.gate.data(), c.beta.data(),
                               config.hv, recurrent, discarded_out.data()));
    }
    // The conv state holds the last `history` conv inputs: the old ones followed by the kept rows.
    float* conv = state.conv_state(il);
    const int64_t from_old = std::max<int64_t>(0, history - keep_rows);
    std::copy(c.conv_before.end() - from_old * conv_dim, c.conv_before.end(), conv);
    const int64_t from_new = history - from_old;
    std::copy(c.pre_conv.begin() + (keep_rows - from_new) * conv_dim,
              c.pre_conv.begin() + keep_rows * conv_dim, conv + from_old * conv_dim);
  }
  state.set_length(capture.first_pos + keep_rows);
  return Status::Ok();
}

}  // namespace clover::model
