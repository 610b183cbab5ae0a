// MappedFile: a read-only, zero-copy memory map of a whole file.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/status.h"

namespace clover::io {

class MappedFile {
 public:
  // Maps `path` read-only. Errors: kNotFound (no such file), kInvalidArgument (a directory),
  // kDataLoss (cannot read/map), each naming the path and the OS reason.
  static Result<std::shared_ptr<MappedFile>> Open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, uint64_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const uint8_t* data_ = nullptr;  // nullptr for an empty file (nothing to map)
  uint64_t size_ = 0;
};

}  // namespace clover::io
