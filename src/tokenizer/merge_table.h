// MergeTable: (left id, right id) -> (rank, merged id), open addressing over one flat array;
// the BPE loop probes it for every adjacent pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace clover::tokenizer {

class MergeTable {
 public:
  struct Entry {
    uint64_t key = kEmpty;
    int32_t rank = 0;
    int32_t merged_id = 0;
  };

  // Sizes the table for `n` merges.
  void Reserve(size_t n);
  // Adds a merge; a pair seen before keeps its first (highest-priority) rank.
  void Insert(int32_t left, int32_t right, int32_t rank, int32_t merged_id);
  // Returns the merge of (left, right), or nullptr.
  const Entry* Find(int32_t left, int32_t right) const {
    const uint64_t key = Key(left, right);
    for (size_t at = Mix(key) & mask_;; at = (at + 1) & mask_) {
      const Entry& e = entries_[at];
      if (e.key == key) return &e;
      if (e.key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  static uint64_t Key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  static uint64_t Mix(uint64_t k) {
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    k ^= k >> 29;
    return k;
  }

  std::vector<Entry> entries_ = std::vector<Entry>(16);
  uint64_t mask_ = 15;
};

}  // namespace clover::tokenizer
