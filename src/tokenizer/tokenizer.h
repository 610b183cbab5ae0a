// Tokenizer: HF-compatible byte-level BPE (added tokens -> NFC -> regex split -> BPE) and decode.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/regex_splitter.h"

namespace clover::tokenizer {

// One pre-tokenizer stage; a Sequence is flattened into a list of these.
struct PreTokenizerStep {
  enum class Kind { kSplit, kByteLevel };
  Kind kind = Kind::kSplit;
  std::shared_ptr<RegexSplitter> regex;  // kSplit, or kByteLevel with use_regex
  bool add_prefix_space = false;         // kByteLevel
};

// Everything a tokenizer is built from, whatever the file it came from.
struct TokenizerSpec {
  std::vector<std::string> tokens;  // byte-level strings, index = id
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<AddedToken> added_tokens;
  bool nfc = false;
  std::vector<PreTokenizerStep> pre_tokenizer;
  std::string source;  // file name for messages
};

struct EncodeOptions {
  // When false, special added tokens are not recognized and their text is tokenized as plain
  // text (user content must not be able to inject control tokens); non-special added tokens
  // such as <think> still match, as with HF's split_special_tokens.
  bool parse_special = true;
};

class Tokenizer {
 public:
  // Returns the tokenizer described by a HF tokenizer.json file.
  static Result<Tokenizer> FromJsonFile(const std::string& path);
  // Returns the tokenizer described by tokenizer.json text; `source` names it in errors.
  static Result<Tokenizer> FromJsonText(std::string_view json, const std::string& source);
  // Returns a tokenizer built from `spec`.
  static Result<Tokenizer> FromSpec(TokenizerSpec spec);

  Tokenizer(Tokenizer&&) = default;
  Tokenizer& operator=(Tokenizer&&) = default;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Returns the ids of `text` (invalid UTF-8 is first repaired with U+FFFD).
  std::vector<int32_t> Encode(std::string_view text, const EncodeOptions& options = {}) const;
  // Returns the text of `ids`: bytes joined, invalid UTF-8 replaced by U+FFFD; special added
  // tokens left out when `skip_special`. Fails on an id outside the vocabulary.
  Result<std::string> Decode(std::span<const int32_t> ids, bool skip_special = false) const;
  // Returns the raw bytes of `id` ("" for a skipped special token when `skip_special`), or an
  // error for an id outside the vocabulary.
  Result<std::string_view> TokenBytes(int32_t id, bool skip_special = false) const;

  // Returns the id of a token given as added-token content or byte-level vocab string, or -1.
  int32_t TokenToId(std::string_view token) const;
  // Returns the vocab string (byte-level form) or added-token content of `id` ("" if unused).
  std::string IdToToken(int32_t id) const;
  // Returns true when `id` is an added token flagged special.
  bool IsSpecial(int32_t id) const;
  // Returns one past the largest id.
  int32_t vocab_size() const { return vocab_size_; }
  const std::vector<AddedToken>& added_tokens() const { return *added_; }
  const std::string& source() const { return source_; }

 private:
  Tokenizer() = default;
  void EncodeText(std::string_view text, std::vector<int32_t>* ids) const;

  std::string source_;
  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<std::vector<AddedToken>> added_;  // stable addresses for the matchers
  std::vector<int32_t> added_index_;                // id -> index in added_, or -1
  AddedTokenMatcher raw_matcher_;                   // tokens matched before normalization
  AddedTokenMatcher normalized_matcher_;            // tokens with `normalized: true`
  bool nfc_ = false;
  std::vector<PreTokenizerStep> pre_tokenizer_;
  int32_t vocab_size_ = 0;
};

}  // namespace clover::tokenizer
