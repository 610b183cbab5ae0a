// DeviceBuffer: device memory owned RAII-style, with copies to and from host memory.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "kernels/cuda/device.h"

namespace clover::kernels::cuda {

// `bytes` of device memory from cudaMalloc, freed when the buffer is destroyed. Move-only.
class DeviceBuffer {
 public:
  // Allocates `bytes` on the current device; errors name `what` and the size.
  static Result<DeviceBuffer> Allocate(size_t bytes, const std::string& what);

  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

  // Copies `bytes` from host `src` to the start of the buffer after every earlier launch on
  // `device`, and waits for it (`src` may be freed on return).
  Status Upload(const Device& device, const void* src, size_t bytes);
  // Copies the first `bytes` of the buffer to host `dst` after every earlier launch on `device`,
  // and waits for it.
  Status Download(const Device& device, void* dst, size_t bytes) const;

 private:
  DeviceBuffer(void* data, size_t bytes, std::string what)
      : data_(data), bytes_(bytes), what_(std::move(what)) {}
  Status CheckFits(size_t bytes, const char* op) const;

  void* data_ = nullptr;
  size_t bytes_ = 0;
  std::string what_;
};

// Returns a buffer holding a copy of `values`.
template <typename T>
Result<DeviceBuffer> UploadSpan(const Device& device, std::span<const T> values,
                                const std::string& what) {
  CLOVER_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(values.size_bytes(), what));
  CLOVER_TRY(buffer.Upload(device, values.data(), values.size_bytes()));
  return buffer;
}

// Returns the first `n` elements of `buffer` as a host vector.
template <typename T>
Result<std::vector<T>> DownloadVector(const Device& device, const DeviceBuffer& buffer, size_t n) {
  std::vector<T> values(n);
  CLOVER_TRY(buffer.Download(device, values.data(), n * sizeof(T)));
  return values;
}

}  // namespace clover::kernels::cuda
