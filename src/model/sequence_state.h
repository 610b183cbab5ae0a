// SequenceState: everything one sequence carries between forward calls (KV pages, GDN states).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "model/config.h"
#include "model/kv_pool.h"

namespace clover::model {

// A cheap copy of a SequenceState: shares KV pages (copy on write) and copies the fixed-size
// GDN states.
struct SequenceSnapshot {
  int64_t length = 0;
  std::vector<std::vector<std::shared_ptr<float>>> kv_pages;
  std::vector<std::vector<float>> conv;
  std::vector<std::vector<float>> recurrent;
};

// Per full-attention layer: K/V of positions [0, length()) in pages from a shared KvPool.
// Per GDN layer: conv state (last K-1 pre-conv rows, [K-1][conv_dim], oldest first) and
// recurrent state ([hv][dk][dv] f32), both zero at position 0.
class SequenceState {
 public:
  // Returns an empty sequence for `config` whose KV pages come from `pool`
  // (pool->kv_dim() == config.kv_dim()).
  SequenceState(const ModelConfig& config, std::shared_ptr<KvPool> pool);
  SequenceState(SequenceState&&) = default;
  SequenceState& operator=(SequenceState&&) = default;
  SequenceState(const SequenceState&) = delete;
  SequenceState& operator=(const SequenceState&) = delete;

  // Returns the number of positions appended so far.
  int64_t length() const { return length_; }

  SequenceSnapshot Snapshot() const;
  // Returns this state to `snapshot` (taken from a state of the same model).
  void Restore(const SequenceSnapshot& snapshot);
  // Returns to the empty sequence (pages go back to the pool).
  void Reset();

  // Forward internals. `layer` is the model layer index.
  // Makes positions [length(), new_length) writable in every attention layer (new pages, or
  // private copies of pages shared with a snapshot).
  void PrepareAppend(int64_t new_length);
  void set_length(int64_t length) { length_ = length; }
  float* k_row(int layer, int64_t pos);
  float* v_row(int layer, int64_t pos);
  // Fills per-page K and V base pointers of `layer` for positions [0, n_positions).
  void PagePointers(int layer, int64_t n_positions, std::vector<const float*>* k_pages,
                    std::vector<const float*>* v_pages) const;
  float* conv_state(int layer) { return conv_[slot_[layer]].data(); }
  float* recurrent_state(int layer) { return recurrent_[slot_[layer]].data(); }
  const float* conv_state(int layer) const { return conv_[slot_[layer]].data(); }
  const float* recurrent_state(int layer) const { return recurrent_[slot_[layer]].data(); }
  const KvPool& pool() const { return *pool_; }

 private:
  std::shared_ptr<KvPool> pool_;
  std::vector<int> slot_;  // layer -> index into kv_pages_ (attention) or conv_/recurrent_ (GDN)
  int64_t length_ = 0;
  std::vector<std::vector<std::shared_ptr<float>>> kv_pages_;
  std::vector<std::vector<float>> conv_;
  std::vector<std::vector<float>> recurrent_;
};

}  // namespace clover::model
