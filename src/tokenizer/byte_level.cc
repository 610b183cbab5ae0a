// GPT-2 byte-to-unicode table (the `bytes_to_unicode` mapping used by every byte-level BPE).
#include "tokenizer/byte_level.h"

#include "tokenizer/utf8.h"

namespace clover::tokenizer {

ByteLevel::ByteLevel() {
  codepoint_to_byte_.fill(-1);
  // Printable Latin-1 bytes keep their own code point; the rest take U+0100.. in byte order.
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    const int cp = printable ? b : next++;
    byte_to_text_[b].clear();
    AppendUtf8(static_cast<char32_t>(cp), &byte_to_text_[b]);
    codepoint_to_byte_[cp] = b;
  }
}

const ByteLevel& ByteLevel::Get() {
  static const ByteLevel table;
  return table;
}

std::string ByteLevel::EncodeString(std::string_view bytes) const {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += byte_to_text_[static_cast<unsigned char>(c)];
  return out;
}

std::optional<std::string> ByteLevel::DecodeString(std::string_view text) const {
  std::string out;
  if (!DecodeAppend(text, &out)) return std::nullopt;
  return out;
}

bool ByteLevel::DecodeAppend(std::string_view text, std::string* out) const {
  const size_t start = out->size();
  size_t i = 0;
  while (i < text.size()) {
    char32_t cp;
    const int n = DecodeUtf8(text, i, &cp);
    if (n < 0 || cp >= codepoint_to_byte_.size() || codepoint_to_byte_[cp] < 0) {
      out->resize(start);
      return false;
    }
    out->push_back(static_cast<char>(codepoint_to_byte_[cp]));
    i += n;
  }
  return true;
}

}  // namespace clover::tokenizer
