// GPT-2 byte-level alphabet: each byte maps to one printable code point (`Ġ` = space).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace clover::tokenizer {

class ByteLevel {
 public:
  // Returns the shared table (built once).
  static const ByteLevel& Get();

  // Returns the UTF-8 text of the code point that stands for `byte`.
  const std::string& Encode(unsigned char byte) const { return byte_to_text_[byte]; }
  // Returns `bytes` in byte-level form.
  std::string EncodeString(std::string_view bytes) const;
  // Returns the raw bytes of a byte-level string, or nullopt when it holds a code point
  // outside the alphabet.
  std::optional<std::string> DecodeString(std::string_view text) const;
  // Appends the raw bytes of byte-level `text` to `out`; returns false (leaving `out` as it
  // was) when `text` holds a code point outside the alphabet.
  bool DecodeAppend(std::string_view text, std::string* out) const;

 private:
  ByteLevel();
  std::array<std::string, 256> byte_to_text_;
  std::array<int, 324> codepoint_to_byte_;  // the alphabet lies below U+0144
};

}  // namespace clover::tokenizer
