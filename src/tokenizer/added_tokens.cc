// Leftmost-longest matching of added tokens, with HF's lstrip/rstrip/single_word rules.
#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <cctype>

namespace clover::tokenizer {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool IsWordByte(char c) {
  // Non-ASCII bytes count as word characters: a letter next to the token blocks single_word.
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<const AddedToken*> tokens)
    : tokens_(std::move(tokens)) {
  tokens_.erase(std::remove_if(tokens_.begin(), tokens_.end(),
                               [](const AddedToken* t) { return t->content.empty(); }),
                tokens_.end());
  std::stable_sort(tokens_.begin(), tokens_.end(), [](const AddedToken* a, const AddedToken* b) {
    return a->content.size() > b->content.size();
  });
  for (const AddedToken* t : tokens_) first_byte_[static_cast<unsigned char>(t->content[0])] = true;
}

bool AddedTokenMatcher::Matches(const AddedToken& t, std::string_view text, size_t pos) const {
  if (text.compare(pos, t.content.size(), t.content) != 0) return false;
  if (t.single_word) {
    const size_t end = pos + t.content.size();
    if (pos > 0 && IsWordByte(text[pos - 1])) return false;
    if (end < text.size() && IsWordByte(text[end])) return false;
  }
  return true;
}

void AddedTokenMatcher::Split(std::string_view text, bool match_special,
                              std::vector<Segment>* out) const {
  size_t plain_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    const AddedToken* hit = nullptr;
    for (const AddedToken* t : tokens_) {
      if (t->special && !match_special) continue;
      if (Matches(*t, text, pos)) {
        hit = t;
        break;
      }
    }
    if (hit == nullptr) {
      ++pos;
      continue;
    }
    size_t start = pos;
    size_t end = pos + hit->content.size();
    if (hit->lstrip) {
      while (start > plain_start && IsSpace(text[start - 1])) --start;
    }
    if (hit->rstrip) {
      while (end < text.size() && IsSpace(text[end])) ++end;
    }
    if (start > plain_start) out->push_back({text.substr(plain_start, start - plain_start), -1});
    out->push_back({text.substr(start, end - start), hit->id});
    pos = plain_start = end;
  }
  if (plain_start < text.size()) out->push_back({text.substr(plain_start), -1});
}

}  // namespace clover::tokenizer
