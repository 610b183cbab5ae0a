// SHA-256 via OpenSSL's EVP digest interface (libssl-dev, see scripts/setup.sh).
#include "io/sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "io/mapped_file.h"

namespace clover::io {
namespace {

std::string ToHex(const unsigned char* digest, unsigned int n) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

// Hashes `size` bytes in chunks, calling `progress` after each.
Result<std::string> Digest(const uint8_t* data, uint64_t size, const std::function<void(uint64_t)>& progress) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return Internal("SHA-256: EVP init failed");
  constexpr uint64_t kChunk = 16ull << 20;
  for (uint64_t done = 0; done < size;) {
    const uint64_t n = std::min(kChunk, size - done);
    if (EVP_DigestUpdate(ctx.get(), data + done, n) != 1) return Internal("SHA-256: EVP update failed");
    done += n;
    if (progress) progress(done);
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &len) != 1) return Internal("SHA-256: EVP final failed");
  return ToHex(digest, len);
}

}  // namespace

Result<std::string> Sha256File(const std::string& path, const std::function<void(uint64_t)>& progress) {
  CLOVER_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::Open(path));
  return Digest(file->data(), file->size(), progress);
}

std::string Sha256Hex(const void* data, uint64_t size) {
  auto r = Digest(static_cast<const uint8_t*>(data), size, {});
  return r.ok() ? r.value() : std::string();
}

Result<std::vector<Sha256Entry>> ParseSha256Sidecar(const std::string& text, const std::string& label) {
  std::vector<Sha256Entry> out;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const bool hex_ok = line.size() > 66 && std::all_of(line.begin(), line.begin() + 64, [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    });
    if (!hex_ok || line[64] != ' ' || (line[65] != ' ' && line[65] != '*')) {
      return DataLoss(label + ":" + std::to_string(line_no) +
                      ": expected \"<64 hex digits>  <file name>\" (sha256sum format), found \"" + line + "\"");
    }
    Sha256Entry e;
    e.hex = line.substr(0, 64);
    std::transform(e.hex.begin(), e.hex.end(), e.hex.begin(), [](char c) { return static_cast<char>(std::tolower(c)); });
    e.name = line.substr(66);
    out.push_back(std::move(e));
  }
  if (out.empty()) return DataLoss(label + ": sidecar file lists no files");
  return out;
}

}  // namespace clover::io
