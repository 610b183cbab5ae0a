// Flat merge-rank table.
#include "tokenizer/merge_table.h"

namespace clover::tokenizer {

void MergeTable::Reserve(size_t n) {
  size_t capacity = 16;
  while (capacity < n + n / 2) capacity <<= 1;  // load factor <= 2/3
  entries_.assign(capacity, Entry{});
  mask_ = capacity - 1;
}

void MergeTable::Insert(int32_t left, int32_t right, int32_t rank, int32_t merged_id) {
  const uint64_t key = Key(left, right);
  for (size_t at = Mix(key) & mask_;; at = (at + 1) & mask_) {
    Entry& e = entries_[at];
    if (e.key == key) return;
    if (e.key == kEmpty) {
      e = Entry{key, rank, merged_id};
      return;
    }
  }
}

}  // namespace clover::tokenizer
