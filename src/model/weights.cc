// WeightStorage: owned aligned buffers for transformed tensors.
#include "model/weights.h"

#include <cstdlib>
#include <cstring>

namespace clover::model {

void* WeightStorage::Allocate(uint64_t nbytes) {
  constexpr uint64_t kAlign = 64;
  const uint64_t rounded = (nbytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  std::memset(p, 0, rounded == 0 ? kAlign : rounded);
  owned_.emplace_back(p, std::free);
  return p;
}

}  // namespace clover::model
