// SHA-256 of files (OpenSSL EVP) and parsing of `sha256sum`-format sidecar files.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace clover::io {

// Returns the lower-case hex SHA-256 of the file at `path`. `progress`, when set, receives the
// number of bytes hashed so far.
Result<std::string> Sha256File(const std::string& path, const std::function<void(uint64_t)>& progress = {});

// Returns the lower-case hex SHA-256 of `size` bytes.
std::string Sha256Hex(const void* data, uint64_t size);

// One line of a sidecar file: "<64 hex>  <name>" (a '*' before the name marks binary mode).
struct Sha256Entry {
  std::string hex;
  std::string name;
};
// Parses `text` (the contents of `label`); kDataLoss naming the line when a line is malformed.
Result<std::vector<Sha256Entry>> ParseSha256Sidecar(const std::string& text, const std::string& label);

}  // namespace clover::io
