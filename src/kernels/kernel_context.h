// KernelContext: the thread pool and kernel table every multi-threaded kernel call receives.
#pragma once

#include "core/thread_pool.h"
#include "kernels/kernel_table.h"

namespace clover::kernels {

// Passed by reference from the engine down to the kernels; never a global.
struct KernelContext {
  ThreadPool& pool;
  const KernelTable& table;
};

}  // namespace clover::kernels
