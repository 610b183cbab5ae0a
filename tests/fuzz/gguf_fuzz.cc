// libFuzzer target: the GGUF reader (and the hparam extraction on top of it) on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/gguf.h"
#include "model/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = clover::io::GgufFile::Parse(std::span<const uint8_t>(data, size), "fuzz.gguf");
  if (!file.ok()) return 0;
  // Every tensor's first and last byte is read, so the sanitizers check the views' bounds.
  uint8_t touched = 0;
  for (const auto& t : file->tensors()) {
    if (t.view.nbytes == 0) continue;
    touched ^= t.view.bytes()[0];
    touched ^= t.view.bytes()[t.view.nbytes - 1];
  }
  for (const auto& [key, value] : file->metadata())
    touched ^= static_cast<uint8_t>(value.ToString().size());
  volatile uint8_t sink = touched;  // keeps the reads
  (void)sink;
  (void)clover::model::ConfigFromGguf(*file);
  return 0;
}
