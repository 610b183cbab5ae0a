// Open-addressing token -> id table.
#include "tokenizer/token_index.h"

namespace clover::tokenizer {

uint64_t TokenIndex::Hash(std::string_view s) {
  // FNV-1a with a final avalanche: tokens are short, and the mix spreads them over the table.
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

void TokenIndex::Build(const std::vector<std::string>& tokens) {
  tokens_ = &tokens;
  size_t capacity = 16;
  while (capacity < tokens.size() + tokens.size() / 2) capacity <<= 1;  // load factor <= 2/3
  slots_.assign(capacity, 0);
  mask_ = capacity - 1;
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty()) continue;
    const uint64_t h = Hash(tokens[id]);
    size_t at = h & mask_;
    while (slots_[at] != 0) at = (at + 1) & mask_;
    slots_[at] = (h & 0xFFFFFFFF00000000ull) | (id + 1);
  }
}

int32_t TokenIndex::Find(std::string_view token) const {
  if (slots_.empty()) return -1;
  const uint64_t h = Hash(token);
  for (size_t at = h & mask_;; at = (at + 1) & mask_) {
    const uint64_t slot = slots_[at];
    if (slot == 0) return -1;
    if ((slot & 0xFFFFFFFF00000000ull) != (h & 0xFFFFFFFF00000000ull)) continue;
    const uint32_t id = static_cast<uint32_t>(slot) - 1;
    if ((*tokens_)[id] == token) return static_cast<int32_t>(id);
  }
}

}  // namespace clover::tokenizer
