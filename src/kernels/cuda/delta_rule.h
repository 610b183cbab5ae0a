// Gated delta rule on the device: the per-token recurrence of kernels::DeltaRuleRecurrent.
#pragma once

#include "core/status.h"
#include "kernels/cuda/device.h"
#include "kernels/delta_rule.h"

namespace clover::kernels::cuda {

// The recurrence of kernels::DeltaRuleRecurrent over `args.n_rows` consecutive tokens (one
// decode step when n_rows == 1, a sequential scan otherwise): S = e^g S; S += k (beta (v -
// S^T k))^T; o = S^T q. Every pointer in `args` is a device pointer; the state is updated in
// place. dk <= 256.
Status DeltaRuleRecurrent(Device& device, const DeltaRuleArgs& args);

}  // namespace clover::kernels::cuda
