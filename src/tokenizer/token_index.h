// TokenIndex: token string -> id, an open-addressing table over the vocabulary's own strings
// (one probe array, no per-entry nodes: loading Qwen's 151k-entry vocab stays cache friendly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clover::tokenizer {

class TokenIndex {
 public:
  // Indexes `tokens` (index = id; empty strings are skipped). `tokens` must outlive the index
  // and stay unmodified.
  void Build(const std::vector<std::string>& tokens);
  // Returns the id of `token`, or -1.
  int32_t Find(std::string_view token) const;

 private:
  static uint64_t Hash(std::string_view s);

  const std::vector<std::string>* tokens_ = nullptr;
  std::vector<uint64_t> slots_;  // (hash high 32 bits << 32) | (id + 1); 0 = empty
  uint64_t mask_ = 0;
};

}  // namespace clover::tokenizer
