// Helpers for the forward tests: prompt runs in chunks, greedy decoding, logit comparisons.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/kernel_table.h"
#include "model/model.h"

namespace clover::model::testing {

using Logits = std::vector<std::vector<float>>;

// `n` token ids drawn uniformly from [0, vocab) with `seed`.
inline std::vector<int32_t> RandomIds(int64_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> d(0, static_cast<int32_t>(vocab - 1));
  std::vector<int32_t> ids(n);
  for (int32_t& id : ids) id = d(rng);
  return ids;
}

// A thread pool + kernel table (best ISA) + model; what every forward test needs.
struct Engine {
  ThreadPool pool;
  kernels::KernelContext ctx;
  std::unique_ptr<Model> model;
  ForwardScratch scratch;

  explicit Engine(const ModelWeights& w, int threads = 2, Isa isa = SelectIsa().value(),
                  int64_t kv_page_size = kDefaultKvPageSize)
      : pool(threads), ctx{pool, kernels::GetKernelTable(isa)} {
    Result<std::unique_ptr<Model>> m = Model::Create(w, ctx, kv_page_size);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (m.ok()) model = std::move(*m);
  }

  // Appends `ids` to `seq` and returns the logits of every appended row; the pass is recorded
  // into `capture` when given (Model::TruncateAppend).
  Logits Append(SequenceState& seq, const std::vector<int32_t>& ids,
                AppendCapture* capture = nullptr) {
    ForwardBatch batch;
    AppendGroup g;
    g.state = &seq;
    g.tokens = ids;
    g.first_pos = seq.length();
    g.capture = capture;
    for (size_t i = 0; i < ids.size(); ++i) g.logit_rows.push_back(static_cast<int64_t>(i));
    batch.appends.push_back(g);
    return Run(batch, nullptr);
  }

  // Runs one preview pass of `ids` after `seq` and returns the logits of every row; the raw
  // output (coresets, expert counts) goes to `raw` when given.
  Logits Preview(const SequenceState& seq, const std::vector<int32_t>& ids,
                 ForwardLogits* raw = nullptr) {
    ForwardBatch batch;
    PreviewGroup g;
    g.state = &seq;
    g.tokens = ids;
    g.first_pos = seq.length();
    for (size_t i = 0; i < ids.size(); ++i) g.logit_rows.push_back(static_cast<int64_t>(i));
    batch.previews.push_back(g);
    return Run(batch, raw);
  }

  // Runs `batch` and returns the logits of every requested row; the raw output goes to `raw`
  // when given.
  Logits Run(const ForwardBatch& batch, ForwardLogits* raw) {
    Result<ForwardLogits> out = model->Forward(batch, scratch);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    Logits rows;
    if (!out.ok()) return rows;
    for (int64_t r = 0; r < out->n_rows; ++r)
      rows.emplace_back(out->row(r), out->row(r) + out->vocab);
    if (raw != nullptr) *raw = std::move(*out);
    return rows;
  }

  // Runs `ids` from an empty sequence in consecutive chunks of the given sizes (rest: one chunk).
  Logits Prompt(const std::vector<int32_t>& ids, const std::vector<int64_t>& chunks = {}) {
    SequenceState seq = model->NewSequence();
    Logits all;
    size_t at = 0;
    for (int64_t c : chunks) {
      Logits part = Append(seq, std::vector<int32_t>(ids.begin() + at, ids.begin() + at + c));
      all.insert(all.end(), part.begin(), part.end());
      at += c;
    }
    if (at < ids.size()) {
      Logits part = Append(seq, std::vector<int32_t>(ids.begin() + at, ids.end()));
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }
};

// Returns every GDN state value and every committed K/V row of `s`, in layer order.
inline std::vector<float> StateBytes(const SequenceState& s, const ModelConfig& c) {
  std::vector<float> out;
  for (int il = 0; il < c.n_layers; ++il) {
    if (c.layer_kinds[il] == LayerKind::kGatedDeltaNet) {
      const float* conv = s.conv_state(il);
      const float* rec = s.recurrent_state(il);
      out.insert(out.end(), conv, conv + (c.conv_kernel - 1) * c.conv_dim());
      out.insert(out.end(), rec, rec + int64_t{c.hv} * c.dk * c.dv);
    } else {
      std::vector<const float*> k, v;
      s.PagePointers(il, s.length(), &k, &v);
      const int64_t ps = s.pool().page_size();
      for (int64_t p = 0; p < s.length(); ++p) {
        const float* kr = k[p / ps] + (p % ps) * c.kv_dim();
        const float* vr = v[p / ps] + (p % ps) * c.kv_dim();
        out.insert(out.end(), kr, kr + c.kv_dim());
        out.insert(out.end(), vr, vr + c.kv_dim());
      }
    }
  }
  return out;
}

inline int32_t Argmax(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Returns max |a - b| over all rows (rows must match in number and width).
inline double MaxAbsDiff(const Logits& a, const Logits& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t r = 0; r < std::min(a.size(), b.size()); ++r) {
    EXPECT_EQ(a[r].size(), b[r].size());
    for (size_t i = 0; i < std::min(a[r].size(), b[r].size()); ++i)
      m = std::max(m, static_cast<double>(std::abs(a[r][i] - b[r][i])));
  }
  return m;
}

// Returns max |a - b| / max |b|.
inline double MaxRelDiff(const Logits& a, const Logits& b) {
  double den = 1e-30;
  for (const auto& r : b)
    for (float v : r) den = std::max(den, static_cast<double>(std::abs(v)));
  return MaxAbsDiff(a, b) / den;
}

// Returns the median over rows of max |a - b| / max |b| within the row. A perturbation that
// flips a row's expert choice moves that row by O(10%) whatever its size (routing is
// discontinuous); the median measures the smooth part, which scales with the weight error.
inline double MedianRowRelDiff(const Logits& a, const Logits& b) {
  EXPECT_EQ(a.size(), b.size());
  std::vector<double> rows;
  for (size_t r = 0; r < std::min(a.size(), b.size()); ++r)
    rows.push_back(MaxRelDiff({a[r]}, {b[r]}));
  if (rows.empty()) return 0.0;
  std::nth_element(rows.begin(), rows.begin() + rows.size() / 2, rows.end());
  return rows[rows.size() / 2];
}

}  // namespace clover::model::testing
