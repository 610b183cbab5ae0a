// Progress bar drawing.
#include "core/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace clover {

bool Progress::Enabled() {
  static const bool enabled = isatty(STDERR_FILENO) && std::getenv("CLOVER_NO_PROGRESS") == nullptr;
  return enabled;
}

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { Finish(); }

void Progress::Update(uint64_t done) {
  if (!Enabled() || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  if (total_ > 0) {
    const double frac = done >= total_ ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
    const int filled = static_cast<int>(frac * kWidth);
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r%s [%s] %5.1f%%", label_.c_str(), bar.c_str(), frac * 100.0);
  } else {
    std::fprintf(stderr, "\r%s %llu", label_.c_str(), static_cast<unsigned long long>(done));
  }
  std::fflush(stderr);
}

void Progress::Finish() {
  if (finished_) return;
  finished_ = true;
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

}  // namespace clover
