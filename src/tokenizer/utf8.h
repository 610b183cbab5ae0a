// UTF-8 helpers shared by the tokenizer: decoding, lossy repair, and NFC through utf8proc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace clover::tokenizer {

// Returns the length (1-4) of the valid UTF-8 sequence at `s[i]` and stores its code point in
// `cp`; returns -n when the sequence is invalid, n being the maximal invalid subpart (>= 1)
// that one U+FFFD replaces (the Unicode "maximal subpart" rule, as Rust's from_utf8_lossy).
int DecodeUtf8(std::string_view s, size_t i, char32_t* cp);

// Appends the UTF-8 encoding of `cp` to `out`.
void AppendUtf8(char32_t cp, std::string* out);

// Returns true when `s` is entirely valid UTF-8.
bool IsValidUtf8(std::string_view s);

// Returns `bytes` with each maximal invalid subsequence replaced by U+FFFD.
std::string ToValidUtf8(std::string_view bytes);

// Returns the length of the longest prefix of `bytes` that does not end inside a UTF-8
// sequence which could still be completed by more bytes.
size_t CompleteUtf8Prefix(std::string_view bytes);

// Returns the NFC form of valid UTF-8 `s` (ASCII passes through untouched).
std::string NfcNormalize(std::string_view s);

// Returns the number of code points in valid UTF-8 `s`.
size_t CountCodePoints(std::string_view s);

}  // namespace clover::tokenizer
