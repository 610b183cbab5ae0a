// Device context: open a GPU, own its stream, cuBLAS handle and scratch memory.
#include <string>
#include <utility>

#include "kernels/cuda/device.h"

namespace clover::kernels::cuda {

Status CudaStatus(cudaError_t err, std::string_view call) {
  if (err == cudaSuccess) return Status::Ok();
  std::string message = "cuda: " + std::string(call) + " failed: " + cudaGetErrorName(err) + " (" +
                        cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation) return ResourceExhausted(std::move(message));
  return Internal(std::move(message));
}

Status CublasStatus(cublasStatus_t status, std::string_view call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  std::string message = "cuda: " + std::string(call) + " failed: " + cublasGetStatusName(status) +
                        " (" + cublasGetStatusString(status) + ")";
  if (status == CUBLAS_STATUS_ALLOC_FAILED) return ResourceExhausted(std::move(message));
  return Internal(std::move(message));
}

Status LaunchStatus(std::string_view kernel) {
  return CudaStatus(cudaGetLastError(), "launch of " + std::string(kernel));
}

Result<std::unique_ptr<Device>> Device::Open(int ordinal) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  // No GPU, no driver, a driver older than this runtime, no device nodes in a container: in
  // every case this machine cannot run CUDA at all.
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();  // leave no error behind for the next runtime call
    return NotFound("cuda: no CUDA device available (cudaGetDeviceCount: " +
                    std::string(err == cudaSuccess ? "0 devices" : cudaGetErrorString(err)) + ")");
  }
  if (ordinal < 0 || ordinal >= count) {
    return OutOfRange("cuda: device " + std::to_string(ordinal) + " requested, " +
                      std::to_string(count) + " present");
  }
  std::unique_ptr<Device> device(new Device());
  device->ordinal_ = ordinal;
  CLOVER_CUDA_TRY(cudaSetDevice(ordinal));
  cudaDeviceProp prop{};
  CLOVER_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
  device->name_ = prop.name;
  device->compute_capability_ = prop.major * 10 + prop.minor;
  device->sm_count_ = prop.multiProcessorCount;
  device->total_memory_ = prop.totalGlobalMem;
  CLOVER_CUDA_TRY(cudaStreamCreateWithFlags(&device->stream_, cudaStreamNonBlocking));
  CLOVER_TRY(CublasStatus(cublasCreate(&device->cublas_), "cublasCreate"));
  CLOVER_TRY(CublasStatus(cublasSetStream(device->cublas_, device->stream_), "cublasSetStream"));
  // Spelled out: nvcc's front end does not apply the implicit move into Result's constructor.
  return Result<std::unique_ptr<Device>>(std::move(device));
}

Device::~Device() {
  // Errors while tearing down cannot be reported to anyone; the process keeps running.
  if (stream_) cudaStreamSynchronize(stream_);
  if (scratch_) cudaFree(scratch_);
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status Device::Synchronize() const {
  return CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

Result<void*> Device::Scratch(size_t bytes) {
  if (bytes <= scratch_bytes_) return scratch_;
  // Launches still queued may read the old buffer.
  CLOVER_TRY(Synchronize());
  CLOVER_CUDA_TRY(cudaFree(scratch_));
  scratch_ = nullptr;
  scratch_bytes_ = 0;
  CLOVER_TRY(CudaStatus(cudaMalloc(&scratch_, bytes),
                        "cudaMalloc(scratch, " + std::to_string(bytes) + " bytes)"));
  scratch_bytes_ = bytes;
  return scratch_;
}

}  // namespace clover::kernels::cuda
