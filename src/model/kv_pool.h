// KvPool: fixed-size pages of attention K/V rows, recycled and shared between sequences.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace clover::model {

// One page holds `page_size` positions of one attention layer: K rows [page_size][kv_dim], then
// V rows [page_size][kv_dim]. Pages are reference counted (std::shared_ptr): a snapshot and its
// sequence share pages until one of them writes (copy on write, SequenceState).
class KvPool : public std::enable_shared_from_this<KvPool> {
 public:
  // Returns a pool of pages of `page_size` positions x `kv_dim` floats for K and for V.
  static std::shared_ptr<KvPool> Create(int64_t page_size, int64_t kv_dim);
  ~KvPool();

  // Returns a page (uninitialised contents); it returns to this pool when the last owner drops it.
  std::shared_ptr<float> Acquire();

  int64_t page_size() const { return page_size_; }
  int64_t kv_dim() const { return kv_dim_; }
  int64_t page_floats() const { return 2 * page_size_ * kv_dim_; }
  // Returns the number of pages handed out and not yet returned.
  int64_t pages_in_use() const;

 private:
  KvPool(int64_t page_size, int64_t kv_dim) : page_size_(page_size), kv_dim_(kv_dim) {}
  void Release(float* page);

  int64_t page_size_;
  int64_t kv_dim_;
  mutable std::mutex mu_;
  std::vector<float*> free_;
  int64_t in_use_ = 0;
};

}  // namespace clover::model
