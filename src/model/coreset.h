// Block expert coreset of the preview MoE (clover-spec.md §2, §4 Q5; golden clover-tiny README
// §3.2 "MoE layers: block coreset").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace clover::model {

struct CoresetParams {
  float mass = 0.9f;     // diffusion.coreset_mass
  int min_experts = 16;  // diffusion.coreset_min_experts
  int vote_topk = 8;     // num_experts_per_tok: each row votes with its own top-k mass
  int preview_topk = 8;  // diffusion.preview_topk: experts each row uses inside the set
};

// Each row's experts inside a kept set.
struct CoresetRoutes {
  int picked_per_row = 0;            // min(preview_topk, kept.size())
  std::vector<int32_t> row_experts;  // [rows x picked_per_row], descending probability
  std::vector<float> row_weights;    // [rows x picked_per_row], renormalised softmax probabilities
};

struct Coreset : CoresetRoutes {
  std::vector<int32_t> kept;  // expert ids, descending votes (ties -> lower id)
  int n_by_mass = 0;          // size before the min_experts guard
  std::vector<double> votes;  // [n_experts], normalised to sum 1
};

// Computes the coreset of a block from its router logits [rows x n_experts] (row-major):
// P = softmax per row (f64); votes = sum over rows of each row's top-`vote_topk` P, normalised;
// kept = the smallest prefix of experts sorted by votes whose summed votes reach `mass` (>=), then
// at least min(min_experts, n_experts); every row re-picks its top-`preview_topk` inside the set
// by P (ties -> lower id) with weights P / (sum of the picked P). InvalidArgument on bad shapes or
// parameters.
Result<Coreset> ComputeBlockCoreset(std::span<const float> router_logits, int rows, int n_experts,
                                    const CoresetParams& params);

// Returns the routes of rows inside a set `kept` from an earlier pass (the expert budget,
// clover-decoding.md §8): each row re-picks its top-`preview_topk` of `kept` exactly as
// ComputeBlockCoreset does, so the same logits and set give the same routes. InvalidArgument on
// bad shapes, an empty set or an id outside [0, n_experts).
Result<CoresetRoutes> RouteInsideCoreset(std::span<const float> router_logits, int rows,
                                         int n_experts, std::span<const int32_t> kept,
                                         int preview_topk);

}  // namespace clover::model
