// Tokenizer encode/decode pipeline.
#include "tokenizer/tokenizer.h"

#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace clover::tokenizer {

Result<Tokenizer> Tokenizer::FromSpec(TokenizerSpec spec) {
  Tokenizer t;
  t.source_ = spec.source;
  CLOVER_ASSIGN_OR_RETURN(BpeModel model,
                          BpeModel::Create(std::move(spec.tokens), spec.merges, spec.source));
  t.model_ = std::make_unique<BpeModel>(std::move(model));
  t.added_ = std::make_unique<std::vector<AddedToken>>(std::move(spec.added_tokens));
  t.vocab_size_ = t.model_->size();
  for (const AddedToken& a : *t.added_) {
    if (a.id < 0) {
      return DataLoss(spec.source + ": added token \"" + a.content + "\" has negative id " +
                      std::to_string(a.id));
    }
    t.vocab_size_ = std::max(t.vocab_size_, a.id + 1);
  }
  t.added_index_.assign(t.vocab_size_, -1);
  std::vector<const AddedToken*> raw, normalized;
  for (size_t i = 0; i < t.added_->size(); ++i) {
    const AddedToken& a = (*t.added_)[i];
    t.added_index_[a.id] = static_cast<int32_t>(i);
    (a.normalized && spec.nfc ? normalized : raw).push_back(&a);
  }
  t.raw_matcher_ = AddedTokenMatcher(std::move(raw));
  t.normalized_matcher_ = AddedTokenMatcher(std::move(normalized));
  t.nfc_ = spec.nfc;
  t.pre_tokenizer_ = std::move(spec.pre_tokenizer);
  return t;
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, const EncodeOptions& options) const {
  std::string repaired;
  if (!IsValidUtf8(text)) {
    repaired = ToValidUtf8(text);
    text = repaired;
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  std::vector<Segment> segments;
  raw_matcher_.Split(text, options.parse_special, &segments);
  std::vector<Segment> inner;
  for (const Segment& s : segments) {
    if (s.token_id >= 0) {
      ids.push_back(s.token_id);
      continue;
    }
    if (!nfc_) {
      EncodeText(s.text, &ids);
      continue;
    }
    const std::string normalized = NfcNormalize(s.text);
    if (normalized_matcher_.empty()) {
      EncodeText(normalized, &ids);
      continue;
    }
    inner.clear();
    normalized_matcher_.Split(normalized, options.parse_special, &inner);
    for (const Segment& n : inner) {
      if (n.token_id >= 0) {
        ids.push_back(n.token_id);
      } else {
        EncodeText(n.text, &ids);
      }
    }
  }
  return ids;
}

void Tokenizer::EncodeText(std::string_view text, std::vector<int32_t>* ids) const {
  thread_local std::vector<std::string_view> pieces, next;
  std::string prefixed;
  pieces.clear();
  pieces.push_back(text);
  for (const PreTokenizerStep& step : pre_tokenizer_) {
    if (step.kind == PreTokenizerStep::Kind::kByteLevel && step.add_prefix_space &&
        !text.empty() && text[0] != ' ' && pieces.size() == 1) {
      // HF prepends the space to the string being pre-tokenized; with one piece left this is
      // the whole segment (the GPT-2 layout: ByteLevel alone, or first in the sequence).
      prefixed.clear();
      prefixed.push_back(' ');
      prefixed.append(pieces[0].data(), pieces[0].size());
      pieces[0] = prefixed;
    }
    if (!step.regex) continue;
    next.clear();
    for (std::string_view p : pieces) step.regex->Split(p, &next);
    pieces.swap(next);
  }
  for (std::string_view p : pieces) model_->Encode(p, ids);
}

Result<std::string_view> Tokenizer::TokenBytes(int32_t id, bool skip_special) const {
  if (id < 0 || id >= vocab_size_) {
    return OutOfRange(source_ + ": token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                      std::to_string(vocab_size_) + ")");
  }
  if (const int32_t a = added_index_[id]; a >= 0) {
    const AddedToken& t = (*added_)[a];
    if (skip_special && t.special) return std::string_view();
    return std::string_view(t.content);
  }
  if (id >= model_->size() || model_->IdToToken(id).empty()) {
    return OutOfRange(source_ + ": token id " + std::to_string(id) + " is unused in the vocabulary");
  }
  return std::string_view(model_->IdToBytes(id));
}

Result<std::string> Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string bytes;
  for (int32_t id : ids) {
    CLOVER_ASSIGN_OR_RETURN(std::string_view b, TokenBytes(id, skip_special));
    bytes.append(b);
  }
  if (IsValidUtf8(bytes)) return bytes;
  return ToValidUtf8(bytes);
}

int32_t Tokenizer::TokenToId(std::string_view token) const {
  for (const AddedToken& a : *added_) {
    if (a.content == token) return a.id;
  }
  return model_->TokenToId(token);
}

std::string Tokenizer::IdToToken(int32_t id) const {
  if (id < 0 || id >= vocab_size_) return "";
  if (const int32_t a = added_index_[id]; a >= 0) return (*added_)[a].content;
  return id < model_->size() ? model_->IdToToken(id) : "";
}

bool Tokenizer::IsSpecial(int32_t id) const {
  if (id < 0 || id >= vocab_size_) return false;
  const int32_t a = added_index_[id];
  return a >= 0 && (*added_)[a].special;
}

}  // namespace clover::tokenizer
