// Block expert coreset (see coreset.h).
#include "model/coreset.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace clover::model {
namespace {

Status CheckInputs(std::span<const float> logits, int rows, int n_experts, const CoresetParams& p) {
  if (rows < 1 || n_experts < 1)
    return InvalidArgument("coreset: expected rows >= 1 and n_experts >= 1, found " +
                           std::to_string(rows) + " and " + std::to_string(n_experts));
  if (logits.size() != static_cast<size_t>(rows) * static_cast<size_t>(n_experts))
    return InvalidArgument("coreset: router logits hold " + std::to_string(logits.size()) +
                           " values, expected rows*n_experts = " +
                           std::to_string(static_cast<size_t>(rows) * n_experts));
  if (!(p.mass > 0.0f && p.mass <= 1.0f))
    return InvalidArgument("coreset: diffusion.coreset_mass expected in (0, 1], found " +
                           std::to_string(p.mass));
  if (p.min_experts < 0 || p.vote_topk < 1 || p.preview_topk < 1)
    return InvalidArgument(
        "coreset: expected min_experts >= 0, vote_topk >= 1, preview_topk >= 1, "
        "found " +
        std::to_string(p.min_experts) + ", " + std::to_string(p.vote_topk) + ", " +
        std::to_string(p.preview_topk));
  return Status::Ok();
}

// Returns the per-row softmax of `logits` [rows x n_experts] in f64.
std::vector<double> RowSoftmax(std::span<const float> logits, int rows, size_t ne) {
  std::vector<double> probs(static_cast<size_t>(rows) * ne);
  for (int r = 0; r < rows; ++r) {
    const float* l = logits.data() + r * ne;
    double* p = probs.data() + r * ne;
    const double m = *std::max_element(l, l + ne);
    double z = 0.0;
    for (size_t e = 0; e < ne; ++e) z += p[e] = std::exp(double{l[e]} - m);
    for (size_t e = 0; e < ne; ++e) p[e] /= z;
  }
  return probs;
}

// Orders expert ids by `score` descending, ties -> lower id.
auto ByScore(const double* score) {
  return [score](int32_t a, int32_t b) {
    return score[a] > score[b] || (score[a] == score[b] && a < b);
  };
}

// Fills `out` with each row's top-`preview_topk` of `kept` by probability, weights renormalised
// over the picked probabilities.
void PickInside(const std::vector<double>& probs, int rows, size_t ne,
                std::span<const int32_t> kept, int preview_topk, CoresetRoutes* out) {
  const size_t pick = std::min(kept.size(), static_cast<size_t>(preview_topk));
  out->picked_per_row = static_cast<int>(pick);
  out->row_experts.resize(static_cast<size_t>(rows) * pick);
  out->row_weights.resize(static_cast<size_t>(rows) * pick);
  std::vector<int32_t> inside;
  for (int r = 0; r < rows; ++r) {
    const double* p = probs.data() + r * ne;
    inside.assign(kept.begin(), kept.end());
    std::partial_sort(inside.begin(), inside.begin() + pick, inside.end(), ByScore(p));
    double sum = 0.0;
    for (size_t k = 0; k < pick; ++k) sum += p[inside[k]];
    for (size_t k = 0; k < pick; ++k) {
      out->row_experts[r * pick + k] = inside[k];
      out->row_weights[r * pick + k] = static_cast<float>(p[inside[k]] / sum);
    }
  }
}

}  // namespace

Result<Coreset> ComputeBlockCoreset(std::span<const float> router_logits, int rows, int n_experts,
                                    const CoresetParams& params) {
  CLOVER_TRY(CheckInputs(router_logits, rows, n_experts, params));
  const size_t ne = static_cast<size_t>(n_experts);
  const std::vector<double> probs = RowSoftmax(router_logits, rows, ne);

  Coreset c;
  c.votes.assign(ne, 0.0);
  std::vector<int32_t> order(ne);
  const size_t vote_k = std::min(ne, static_cast<size_t>(params.vote_topk));
  for (int r = 0; r < rows; ++r) {
    const double* p = probs.data() + r * ne;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + vote_k, order.end(), ByScore(p));
    for (size_t k = 0; k < vote_k; ++k) c.votes[order[k]] += p[order[k]];
  }
  const double total = std::accumulate(c.votes.begin(), c.votes.end(), 0.0);
  for (double& v : c.votes) v /= total;

  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), ByScore(c.votes.data()));
  double cum = 0.0;
  size_t n = 0;
  while (n < ne && cum < params.mass) cum += c.votes[order[n++]];
  c.n_by_mass = static_cast<int>(n);
  n = std::min(ne, std::max(n, static_cast<size_t>(params.min_experts)));
  c.kept.assign(order.begin(), order.begin() + n);
  PickInside(probs, rows, ne, c.kept, params.preview_topk, &c);
  return c;
}

Result<CoresetRoutes> RouteInsideCoreset(std::span<const float> router_logits, int rows,
                                         int n_experts, std::span<const int32_t> kept,
                                         int preview_topk) {
  CLOVER_TRY(
      CheckInputs(router_logits, rows, n_experts, CoresetParams{.preview_topk = preview_topk}));
  if (kept.empty()) return InvalidArgument("coreset: the kept expert set is empty");
  for (int32_t e : kept) {
    if (e < 0 || e >= n_experts)
      return InvalidArgument("coreset: kept expert " + std::to_string(e) + " outside [0, " +
                             std::to_string(n_experts) + ")");
  }
  const size_t ne = static_cast<size_t>(n_experts);
  CoresetRoutes routes;
  PickInside(RowSoftmax(router_logits, rows, ne), rows, ne, kept, preview_topk, &routes);
  return routes;
}

}  // namespace clover::model
