// The CUDA device context every launcher runs on: one GPU, one stream, one cuBLAS handle, and
// the conversion of CUDA/cuBLAS errors into Status.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace clover::kernels::cuda {

// Returns Internal (ResourceExhausted for out-of-memory) naming `call` and the CUDA error's name
// and description, e.g. "cuda: cudaMalloc(x, 4096 bytes) failed: cudaErrorMemoryAllocation (out
// of memory)". Ok when `err` is cudaSuccess.
Status CudaStatus(cudaError_t err, std::string_view call);
// The same for a cuBLAS status ("cuda: cublasGemmEx(...) failed: CUBLAS_STATUS_...").
Status CublasStatus(cublasStatus_t status, std::string_view call);
// Returns the launch error of the last kernel launched by this thread, naming `kernel`.
Status LaunchStatus(std::string_view kernel);

// One GPU with its stream and cuBLAS handle. Launchers enqueue on stream() and return without
// waiting; Synchronize() waits and reports errors of kernels that failed while running.
class Device {
 public:
  // Opens GPU `ordinal`. NotFound when this machine has no usable CUDA device (no GPU, or no
  // driver), so callers can fall back to the CPU; OutOfRange when `ordinal` is not present.
  static Result<std::unique_ptr<Device>> Open(int ordinal = 0);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int ordinal() const { return ordinal_; }
  const std::string& name() const { return name_; }
  // Compute capability, e.g. 90 for sm_90 (H100/H200).
  int compute_capability() const { return compute_capability_; }
  int sm_count() const { return sm_count_; }
  size_t total_memory() const { return total_memory_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }

  // Waits for every launch on stream() to finish.
  Status Synchronize() const;
  // Returns at least `bytes` of device scratch memory owned by the device. Launchers use it for
  // temporaries; the contents are valid only until the next launcher call on this device (stream
  // order makes the reuse safe).
  Result<void*> Scratch(size_t bytes);

 private:
  Device() = default;

  int ordinal_ = 0;
  std::string name_;
  int compute_capability_ = 0;
  int sm_count_ = 0;
  size_t total_memory_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
};

}  // namespace clover::kernels::cuda

// Returns the Status of a failed CUDA runtime call from the enclosing function, naming the call.
#define CLOVER_CUDA_TRY(call) CLOVER_TRY(::clover::kernels::cuda::CudaStatus((call), #call))
