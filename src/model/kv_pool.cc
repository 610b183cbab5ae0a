// KvPool: a free list of 64-byte aligned pages; the page deleter keeps the pool alive.
#include "model/kv_pool.h"

#include <cstdlib>

namespace clover::model {

std::shared_ptr<KvPool> KvPool::Create(int64_t page_size, int64_t kv_dim) {
  return std::shared_ptr<KvPool>(new KvPool(page_size, kv_dim));
}

KvPool::~KvPool() {
  for (float* p : free_) std::free(p);
}

std::shared_ptr<float> KvPool::Acquire() {
  float* page = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      page = free_.back();
      free_.pop_back();
    }
    ++in_use_;
  }
  if (page == nullptr) {
    const size_t bytes = (static_cast<size_t>(page_floats()) * sizeof(float) + 63) / 64 * 64;
    page = static_cast<float*>(std::aligned_alloc(64, bytes));
  }
  std::shared_ptr<KvPool> self = shared_from_this();
  return std::shared_ptr<float>(page, [self](float* p) { self->Release(p); });
}

void KvPool::Release(float* page) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(page);
  --in_use_;
}

int64_t KvPool::pages_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

}  // namespace clover::model
