// libFuzzer target: Qwen3 tokenizer on arbitrary bytes. Never crashes; for valid UTF-8,
// decode(encode(x)) == NFC(x), also when special-token text is treated as plain text.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tokenizer/incremental_decoder.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

const clover::tokenizer::Tokenizer& Qwen3() {
  static const clover::tokenizer::Tokenizer* tok = [] {
    // CLOVER_SHARED_DIR, else ../shared next to this repository (found from this file's path).
    const char* dir = std::getenv("CLOVER_SHARED_DIR");
    std::string shared = dir ? dir : std::string(__FILE__);
    if (!dir) shared = shared.substr(0, shared.rfind("/tests/fuzz/")) + "/../shared";
    const std::string path = shared + "/golden/tokenizer/qwen3/tokenizer.json";
    auto r = clover::tokenizer::Tokenizer::FromJsonFile(path);
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().message().c_str());
      std::abort();
    }
    return new clover::tokenizer::Tokenizer(std::move(r).value());
  }();
  return *tok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace clover::tokenizer;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const Tokenizer& tok = Qwen3();
  for (bool parse_special : {true, false}) {
    const auto ids = tok.Encode(input, {.parse_special = parse_special});
    auto decoded = tok.Decode(ids);
    if (!decoded.ok()) std::abort();
    const std::string expected = NfcNormalize(ToValidUtf8(input));
    if (IsValidUtf8(input) && *decoded != expected) std::abort();
    IncrementalDecoder stream(tok);
    std::string streamed;
    for (int32_t id : ids) {
      auto piece = stream.Add(id);
      if (!piece.ok() || !IsValidUtf8(*piece)) std::abort();
      streamed += *piece;
    }
    streamed += stream.Flush();
    if (streamed != *decoded) std::abort();
  }
  return 0;
}
