// LowConfidence selection and the block EOS rule (see low_confidence.h).
#include "decode/low_confidence.h"

#include <algorithm>

namespace clover::decode {

std::vector<size_t> SelectLowConfidence(std::span<const RowCandidate> candidates, double tau) {
  std::vector<size_t> picked;
  if (candidates.empty()) return picked;
  size_t best = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (tau <= 0.0 || candidates[i].confidence > tau) picked.push_back(i);
    if (candidates[i].confidence > candidates[best].confidence) best = i;
  }
  if (picked.empty()) picked.push_back(best);
  return picked;
}

std::vector<size_t> SelectFrontier(std::span<const RowCandidate> candidates, double tau, int pass,
                                   double floor, int target_iters, int max_stride) {
  const size_t n = candidates.size();
  if (n == 0) return {};
  std::vector<bool> take(n, false);
  for (size_t i = 0; i < n; ++i) take[i] = tau <= 0.0 || candidates[i].confidence > tau;
  const int64_t remaining = std::max(target_iters - pass, 1);
  const int64_t k = std::min<int64_t>(
      std::clamp<int64_t>((static_cast<int64_t>(n) + remaining - 1) / remaining, 1, max_stride),
      static_cast<int64_t>(n));
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  // Most confident first; ties to the lower row, like SelectLowConfidence's argmax.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return candidates[a].confidence > candidates[b].confidence;
  });
  for (int64_t j = 0; j < k; ++j)
    if (candidates[order[j]].confidence >= floor) take[order[j]] = true;
  std::vector<size_t> picked;
  for (size_t i = 0; i < n; ++i)
    if (take[i]) picked.push_back(i);
  if (picked.empty()) picked.push_back(order[0]);
  return picked;
}

BlockEnd EvaluateBlockEnd(std::span<const BlockRow> rows, std::span<const int32_t> stop_ids,
                          int needed) {
  const int n = static_cast<int>(rows.size());
  needed = std::clamp(needed, 0, n);
  bool prefix_fixed = true;  // every row before i is fixed
  for (int i = 0; i < n; ++i) {
    const bool fixed = rows[i].state == RowState::kFixed;
    if (i == needed && prefix_fixed) return BlockEnd{true, needed, false};
    if (fixed && std::find(stop_ids.begin(), stop_ids.end(), rows[i].token) != stop_ids.end()) {
      if (prefix_fixed) return BlockEnd{true, i + 1, true};
      return BlockEnd{};  // a stop id right of a masked row: the rows before it must resolve first
    }
    prefix_fixed = prefix_fixed && fixed;
  }
  return prefix_fixed ? BlockEnd{true, n, false} : BlockEnd{};
}

}  // namespace clover::decode
