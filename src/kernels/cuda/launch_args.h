// Argument checks shared by the CUDA launchers: a bad size or stride becomes InvalidArgument
// naming the launcher and the parameter instead of an out-of-bounds kernel.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace clover::kernels::cuda {

// InvalidArgument unless `value` >= `min`.
inline Status CheckAtLeast(std::string_view op, const char* name, int64_t value, int64_t min) {
  if (value >= min) return Status::Ok();
  return InvalidArgument("cuda " + std::string(op) + ": " + name + " = " + std::to_string(value) +
                         ", expected >= " + std::to_string(min));
}

// InvalidArgument unless `value` <= `max`.
inline Status CheckAtMost(std::string_view op, const char* name, int64_t value, int64_t max) {
  if (value <= max) return Status::Ok();
  return InvalidArgument("cuda " + std::string(op) + ": " + name + " = " + std::to_string(value) +
                         ", expected <= " + std::to_string(max));
}

// Rows of `width` elements placed `stride` apart must not overlap.
inline Status CheckStride(std::string_view op, const char* name, int64_t stride, int64_t width) {
  return CheckAtLeast(op, name, stride, width);
}

// Grid dimensions are int (grid.x) or at most 65535 (grid.y, grid.z).
inline constexpr int64_t kMaxGridX = 0x7fffffff;
inline constexpr int64_t kMaxGridYZ = 65535;

}  // namespace clover::kernels::cuda
