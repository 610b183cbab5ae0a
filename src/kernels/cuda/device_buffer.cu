// DeviceBuffer: cudaMalloc/cudaFree ownership and stream-ordered host copies.
#include <utility>

#include "kernels/cuda/device_buffer.h"

namespace clover::kernels::cuda {

Result<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes, const std::string& what) {
  void* data = nullptr;
  // cudaMalloc(0) returns a null pointer; an empty buffer is still a valid buffer.
  if (bytes > 0) {
    CLOVER_TRY(CudaStatus(cudaMalloc(&data, bytes),
                          "cudaMalloc(" + what + ", " + std::to_string(bytes) + " bytes)"));
  }
  return DeviceBuffer(data, bytes, what);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      what_(std::move(other.what_)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    what_ = std::move(other.what_);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  // cudaFree waits for the device to finish with the memory; a failure here has no caller.
  if (data_) cudaFree(data_);
}

Status DeviceBuffer::CheckFits(size_t bytes, const char* op) const {
  if (bytes > bytes_) {
    return OutOfRange("cuda: " + std::string(op) + " of " + std::to_string(bytes) +
                      " bytes into buffer '" + what_ + "' of " + std::to_string(bytes_) + " bytes");
  }
  return Status::Ok();
}

Status DeviceBuffer::Upload(const Device& device, const void* src, size_t bytes) {
  CLOVER_TRY(CheckFits(bytes, "upload"));
  if (bytes == 0) return Status::Ok();
  CLOVER_TRY(
      CudaStatus(cudaMemcpyAsync(data_, src, bytes, cudaMemcpyHostToDevice, device.stream()),
                 "cudaMemcpyAsync(upload to " + what_ + ", " + std::to_string(bytes) + " bytes)"));
  // CUDA may read pageable `src` after cudaMemcpyAsync returns; waiting lets the caller free it.
  return device.Synchronize();
}

Status DeviceBuffer::Download(const Device& device, void* dst, size_t bytes) const {
  CLOVER_TRY(CheckFits(bytes, "download"));
  if (bytes == 0) return Status::Ok();
  CLOVER_TRY(CudaStatus(
      cudaMemcpyAsync(dst, data_, bytes, cudaMemcpyDeviceToHost, device.stream()),
      "cudaMemcpyAsync(download from " + what_ + ", " + std::to_string(bytes) + " bytes)"));
  return device.Synchronize();
}

}  // namespace clover::kernels::cuda
