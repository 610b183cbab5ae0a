// Greedy and seeded sampling over one logits row (see sampling.h).
#include "decode/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace clover::decode {
namespace {

using Candidate = std::pair<double, int32_t>;  // (scaled logit, token id)

// Higher logit first, then lower id: the deterministic order every filter walks.
bool Before(const Candidate& a, const Candidate& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

Status AllMasked(size_t n) {
  return InvalidArgument("sampling: every one of the " + std::to_string(n) +
                         " logits is masked (-inf or NaN); nothing can be chosen");
}

// Sorts the leading part of `c` until its probability mass (under normaliser `z`, max `m`)
// reaches `top_p`, and returns the nucleus length. Grows the sorted prefix geometrically so a
// 248k-entry vocabulary is rarely sorted in full.
size_t NucleusLength(std::vector<Candidate>& c, double m, double z, double top_p) {
  size_t sorted = 0;
  for (size_t want = std::min<size_t>(c.size(), 64);; want = std::min(c.size(), want * 8)) {
    std::partial_sort(c.begin() + sorted, c.begin() + want, c.end(), Before);
    double mass = 0.0;
    for (size_t i = 0; i < want; ++i) {
      mass += std::exp(c[i].first - m) / z;
      if (mass >= top_p) return i + 1;
    }
    if (want == c.size()) return want;
    sorted = want;
  }
}

}  // namespace

Status ValidateSamplingParams(const SamplingParams& p) {
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature))
    return InvalidArgument("sampling.temperature: expected a finite value >= 0, found " +
                           std::to_string(p.temperature));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    return InvalidArgument("sampling.top_p: expected a value in (0, 1], found " +
                           std::to_string(p.top_p));
  if (p.top_k < 0)
    return InvalidArgument("sampling.top_k: expected >= 0 (0 = off), found " +
                           std::to_string(p.top_k));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    return InvalidArgument("sampling.min_p: expected a value in [0, 1], found " +
                           std::to_string(p.min_p));
  return Status::Ok();
}

Rng::Rng(uint64_t seed) : engine_(seed) {}

double Rng::NextUniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

Result<TokenChoice> ChooseGreedy(std::span<const float> logits) {
  int64_t best = -1;
  float best_logit = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] > best_logit) {  // strict: ties keep the lowest id; NaN never wins
      best_logit = logits[i];
      best = static_cast<int64_t>(i);
    }
  }
  if (best < 0) return AllMasked(logits.size());
  double z = 0.0;
  for (float l : logits) {
    if (l > -std::numeric_limits<float>::infinity()) z += std::exp(double{l} - best_logit);
  }
  return TokenChoice{static_cast<int32_t>(best), 1.0 / z};
}

Result<TokenChoice> ChooseSampled(std::span<const float> logits, const SamplingParams& params,
                                  Rng& rng, std::vector<Candidate>& c) {
  const double inv_t = 1.0 / params.temperature;
  c.clear();
  double m = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!(logits[i] > -std::numeric_limits<float>::infinity())) continue;
    const double s = double{logits[i]} * inv_t;
    c.emplace_back(s, static_cast<int32_t>(i));
    m = std::max(m, s);
  }
  if (c.empty()) return AllMasked(logits.size());

  size_t n = c.size();
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < n) {
    std::partial_sort(c.begin(), c.begin() + params.top_k, c.end(), Before);
    n = static_cast<size_t>(params.top_k);
    c.resize(n);
  }
  if (params.top_p < 1.0f) {
    double z = 0.0;
    for (const Candidate& x : c) z += std::exp(x.first - m);
    n = NucleusLength(c, m, z, params.top_p);
    c.resize(n);
  }
  if (params.min_p > 0.0f) {
    // p / p_max >= min_p  <=>  logit >= max + log(min_p); renormalisation keeps the ratio.
    const double floor = m + std::log(double{params.min_p});
    std::erase_if(c, [floor](const Candidate& x) { return x.first < floor; });
  }

  double z = 0.0;
  for (const Candidate& x : c) z += std::exp(x.first - m);
  const double target = rng.NextUniform() * z;
  double acc = 0.0;
  for (const Candidate& x : c) {
    const double w = std::exp(x.first - m);
    acc += w;
    if (target < acc) return TokenChoice{x.second, w / z};
  }
  // Rounding left `target` just past the last partial sum: the last candidate owns that sliver.
  return TokenChoice{c.back().second, std::exp(c.back().first - m) / z};
}

}  // namespace clover::decode
