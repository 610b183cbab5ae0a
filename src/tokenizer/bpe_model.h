// Byte-level BPE model: vocabulary, merge ranks, and the merge loop for one pre-token.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "tokenizer/merge_table.h"
#include "tokenizer/token_index.h"

namespace clover::tokenizer {

class BpeModel {
 public:
  // Returns a model over `tokens` (byte-level strings; index = id, empty = unused id) and
  // `merges` (pairs of byte-level strings, highest priority first). `source` names the file
  // for error messages.
  static Result<BpeModel> Create(std::vector<std::string> tokens,
                                 const std::vector<std::pair<std::string, std::string>>& merges,
                                 const std::string& source);

  // Appends the ids of raw bytes `piece` (one pre-token) to `ids`.
  void Encode(std::string_view piece, std::vector<int32_t>* ids) const;

  // Returns the id of byte-level string `token`, or -1.
  int32_t TokenToId(std::string_view token) const;
  // Returns the byte-level string of `id` (empty when unused).
  const std::string& IdToToken(int32_t id) const { return (*tokens_)[id]; }
  // Returns the raw bytes `id` stands for.
  std::string_view IdToBytes(int32_t id) const {
    return std::string_view(bytes_).substr(bytes_offset_[id], bytes_offset_[id + 1] - bytes_offset_[id]);
  }
  // Returns one past the largest id.
  int32_t size() const { return static_cast<int32_t>(tokens_->size()); }

 private:
  // Pieces shorter than this are cached; the cache stops growing at kCacheEntries (as HF's).
  static constexpr size_t kCacheMaxPieceBytes = 64;
  static constexpr size_t kCacheEntries = 1 << 17;

  void MergeLoop(std::string_view piece, std::vector<int32_t>* ids) const;

  // Heap-allocated so the index's pointer to it survives moves of the model.
  std::unique_ptr<std::vector<std::string>> tokens_ = std::make_unique<std::vector<std::string>>();
  std::string bytes_;                  // every token's raw bytes, back to back
  std::vector<uint32_t> bytes_offset_;  // id -> start in bytes_ (size + 1 entries)
  TokenIndex token_to_id_;
  MergeTable merges_;
  int32_t byte_to_id_[256];

  struct Cache {
    std::mutex mu;
    std::unordered_map<std::string, std::vector<int32_t>> map;
  };
  std::unique_ptr<Cache> cache_ = std::make_unique<Cache>();
};

}  // namespace clover::tokenizer
