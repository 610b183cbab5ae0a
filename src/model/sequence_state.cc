// SequenceState: page bookkeeping with copy on write, snapshot/restore.
#include "model/sequence_state.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"

namespace clover::model {

SequenceState::SequenceState(const ModelConfig& config, std::shared_ptr<KvPool> pool)
    : pool_(std::move(pool)) {
  CLOVER_CHECK(pool_ != nullptr && pool_->kv_dim() == config.kv_dim());
  slot_.resize(config.n_layers);
  for (int i = 0; i < config.n_layers; ++i) {
    if (config.layer_kinds[i] == LayerKind::kFullAttention) {
      slot_[i] = static_cast<int>(kv_pages_.size());
      kv_pages_.emplace_back();
    } else {
      slot_[i] = static_cast<int>(conv_.size());
      conv_.emplace_back(static_cast<size_t>(config.conv_kernel - 1) * config.conv_dim(), 0.0f);
      recurrent_.emplace_back(static_cast<size_t>(config.hv) * config.dk * config.dv, 0.0f);
    }
  }
}

SequenceSnapshot SequenceState::Snapshot() const {
  return SequenceSnapshot{length_, kv_pages_, conv_, recurrent_};
}

void SequenceState::Restore(const SequenceSnapshot& snapshot) {
  CLOVER_CHECK(snapshot.kv_pages.size() == kv_pages_.size() &&
               snapshot.conv.size() == conv_.size());
  length_ = snapshot.length;
  kv_pages_ = snapshot.kv_pages;
  for (size_t i = 0; i < conv_.size(); ++i) {
    std::copy(snapshot.conv[i].begin(), snapshot.conv[i].end(), conv_[i].begin());
    std::copy(snapshot.recurrent[i].begin(), snapshot.recurrent[i].end(), recurrent_[i].begin());
  }
}

void SequenceState::Reset() {
  length_ = 0;
  for (auto& pages : kv_pages_) pages.clear();
  for (auto& c : conv_) std::fill(c.begin(), c.end(), 0.0f);
  for (auto& r : recurrent_) std::fill(r.begin(), r.end(), 0.0f);
}

void SequenceState::PrepareAppend(int64_t new_length) {
  if (new_length <= length_) return;
  const int64_t ps = pool_->page_size();
  const int64_t first_page = length_ / ps;
  const int64_t n_pages = (new_length + ps - 1) / ps;
  for (auto& pages : kv_pages_) {
    // Pages past the length may hold stale rows from before a Restore; they are overwritten.
    if (static_cast<int64_t>(pages.size()) > n_pages) pages.resize(n_pages);
    for (int64_t p = first_page; p < static_cast<int64_t>(pages.size()); ++p) {
      if (pages[p].use_count() > 1) {
        std::shared_ptr<float> copy = pool_->Acquire();
        std::memcpy(copy.get(), pages[p].get(), sizeof(float) * pool_->page_floats());
        pages[p] = std::move(copy);
      }
    }
    while (static_cast<int64_t>(pages.size()) < n_pages) pages.push_back(pool_->Acquire());
  }
}

float* SequenceState::k_row(int layer, int64_t pos) {
  const int64_t ps = pool_->page_size();
  return kv_pages_[slot_[layer]][pos / ps].get() + (pos % ps) * pool_->kv_dim();
}

float* SequenceState::v_row(int layer, int64_t pos) {
  const int64_t ps = pool_->page_size();
  return kv_pages_[slot_[layer]][pos / ps].get() + (ps + pos % ps) * pool_->kv_dim();
}

void SequenceState::PagePointers(int layer, int64_t n_positions, std::vector<const float*>* k_pages,
                                 std::vector<const float*>* v_pages) const {
  const int64_t ps = pool_->page_size();
  const int64_t n_pages = (n_positions + ps - 1) / ps;
  const auto& pages = kv_pages_[slot_[layer]];
  CLOVER_CHECK(n_pages <= static_cast<int64_t>(pages.size()));
  k_pages->resize(n_pages);
  v_pages->resize(n_pages);
  for (int64_t p = 0; p < n_pages; ++p) {
    (*k_pages)[p] = pages[p].get();
    (*v_pages)[p] = pages[p].get() + ps * pool_->kv_dim();
  }
}

}  // namespace clover::model
