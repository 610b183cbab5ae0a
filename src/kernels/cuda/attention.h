// Attention on the device over a contiguous f32 KV buffer (the masks of kernels/attention.h).
#pragma once

#include <cstdint>

#include "core/status.h"
#include "kernels/attention.h"
#include "kernels/cuda/device.h"

namespace clover::kernels::cuda {

// Keys/values of positions [0, n_positions) in device memory: position p at row p (`row_stride`
// floats apart), kv head j at offset j * head_dim.
struct DeviceKv {
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t row_stride = 0;
  int64_t n_positions = 0;
};

// kernels::Attention on the device: for each query row i (position first_pos + i) and head h,
// out = softmax(scale * q k^T) v over the keys `params.mask` lets it see (kCausal: positions <=
// first_pos + i; kPrefixBlock: all n_positions). Online softmax in f32, one block per (row,
// head). Device pointers; head_dim <= 256.
Status Attention(Device& device, const AttentionParams& params, const float* q, int64_t q_stride,
                 int64_t n_rows, int64_t first_pos, const DeviceKv& kv, float* out,
                 int64_t out_stride);

}  // namespace clover::kernels::cuda
