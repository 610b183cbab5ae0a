// The LowConfidence reduction on the device: per logits row, the greedy choice and its softmax
// probability, so only two numbers per row return to the host.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "kernels/cuda/device.h"

namespace clover::kernels::cuda {

// For each of `n_rows` rows of `n_valid` logits (`stride` floats apart; columns past n_valid are
// padding and never read): token[r] = the argmax over the columns other than `mask_id` (-1: none
// excluded), ties to the lowest id, NaN and -inf never chosen; confidence[r] = its probability
// 1 / sum_i e^(l_i - l_max) over the same columns (-inf and NaN terms left out), in f64.
// decode::ChooseGreedy of the row with the mask logit at -inf gives the same token and
// probability. A row with nothing to choose gets token -1 and confidence 0. Device pointers.
Status GreedyConfidence(Device& device, const float* logits, int64_t n_rows, int64_t stride,
                        int64_t n_valid, int32_t mask_id, int32_t* token, double* confidence);

}  // namespace clover::kernels::cuda
