// The memory this process holds, so that a model load can show it maps weights instead of
// copying them (resident pages grow only as a forward touches them).
#pragma once

#include <cstdint>

#include "core/status.h"

namespace clover {

// Returns the bytes of this process's resident set (/proc/self/statm), mapped file pages that
// have been touched included.
Result<int64_t> ResidentBytes();

}  // namespace clover
