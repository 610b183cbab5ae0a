// Checks that a ModelWeights can run on the CPU forward: config invariants, shapes, dtypes.
#pragma once

#include "core/status.h"
#include "model/weights.h"

namespace clover::model {

// Returns kInvalidArgument naming the tensor with expected vs found shape, or kUnimplemented for
// a weight dtype the CPU kernels cannot read yet (quantized types), or OK.
Status ValidateWeights(const ModelWeights& weights);

}  // namespace clover::model
