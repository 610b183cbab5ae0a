// Added (special and user-defined) tokens and the leftmost-longest matcher that cuts them out of
// text before normalization and BPE.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clover::tokenizer {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;       // the match swallows whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool normalized = false;   // matched on the normalized text instead of the raw text
  bool single_word = false;  // only matches when not inside a word
};

// One stretch of input: either plain text or an added token.
struct Segment {
  std::string_view text;
  int32_t token_id = -1;  // >= 0 for an added token
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // Builds a matcher over `tokens` (pointers must outlive the matcher's use).
  explicit AddedTokenMatcher(std::vector<const AddedToken*> tokens);

  // Appends the segments of `text` to `out`: at each position the longest token that starts
  // there wins; tokens flagged special are skipped unless `match_special`.
  void Split(std::string_view text, bool match_special, std::vector<Segment>* out) const;

  bool empty() const { return tokens_.empty(); }

 private:
  bool Matches(const AddedToken& t, std::string_view text, size_t pos) const;

  std::vector<const AddedToken*> tokens_;  // longest first
  bool first_byte_[256] = {};
};

}  // namespace clover::tokenizer
