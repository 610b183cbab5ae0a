// libFuzzer target: the safetensors header parser on arbitrary bytes (errors are fine, crashes are
// not).
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file =
      clover::io::SafetensorsFile::Parse(std::span<const uint8_t>(data, size), "fuzz.safetensors");
  if (!file.ok()) return 0;
  // Touch the first and last byte of every view so ASan catches a view outside the buffer.
  // Every tensor's first and last byte is read, so the sanitizers check the views' bounds.
  uint8_t touched = 0;
  for (const auto& t : file->tensors()) {
    if (t.view.nbytes == 0) continue;
    touched ^= t.view.bytes()[0];
    touched ^= t.view.bytes()[t.view.nbytes - 1];
  }
  volatile uint8_t sink = touched;  // keeps the reads
  (void)sink;
  return 0;
}
