// Shared setup of the decoder tests: a 64-id vocabulary with a mask id and padded ids, and an
// oracle fake model whose confident prediction for absolute position q is Target(q).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decode/decoder.h"
#include "fake_model.h"

namespace clover::decode::testing {

constexpr int64_t kVocab = 64;
constexpr int64_t kValid = 60;  // ids 60..63 are padding
constexpr int32_t kMask = 59;
constexpr int32_t kEos = 2;
constexpr int32_t kThinkEnd = 3;

// The oracle's token for absolute position q: ids 10..49, never a stop id or the mask.
inline int32_t Target(int64_t q) { return static_cast<int32_t>(10 + (q * 7) % 40); }

inline DecodeModelInfo ModelInfo(bool shift_logits = false) {
  DecodeModelInfo m;
  m.vocab_size = kVocab;
  m.n_valid_tokens = kValid;
  m.mask_token_id = kMask;
  m.eos_ids = {kEos};
  m.think_end_id = kThinkEnd;
  m.block_size = 32;
  m.shift_logits = shift_logits;
  return m;
}

inline std::vector<int32_t> Prompt(int n) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(static_cast<int32_t>(4 + i % 5));
  return p;
}

// Oracle logits: `token` at `margin`, the mask id and the padded ids above it (they must be
// suppressed, clover-spec.md I3).
inline std::vector<float> OracleRow(int32_t token, float margin) {
  std::vector<float> l = Peaked(kVocab, token, margin);
  l[kMask] = margin + 5.0f;
  for (int64_t i = kValid; i < kVocab; ++i) l[i] = margin + 50.0f;
  return l;
}

// `target(q)` and `margin(q, row)` (row -1 for causal logits) define the oracle. A preview row r
// at block start p predicts position p + r (+1 with shift_logits), as clover-spec.md §2 says.
inline FakeModel Oracle(bool shift_logits, std::function<int32_t(int64_t)> target = Target,
                        std::function<float(int64_t, int)> margin = nullptr) {
  if (!margin) margin = [](int64_t, int) { return 10.0f; };
  FakeModel f;
  f.vocab = kVocab;
  f.causal = [=](std::span<const int32_t> ctx) {
    const int64_t q = static_cast<int64_t>(ctx.size());
    return OracleRow(target(q), margin(q, -1));
  };
  f.preview = [=](std::span<const int32_t> ctx, std::span<const int32_t>, int row) {
    const int64_t q = static_cast<int64_t>(ctx.size()) + row + (shift_logits ? 1 : 0);
    return OracleRow(target(q), margin(q, row));
  };
  return f;
}

inline std::string TokenText(int32_t t) { return "<" + std::to_string(t) + ">"; }

}  // namespace clover::decode::testing
