// Progress: a one-line progress bar on stderr for slow steps; silent unless stderr is a TTY.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace clover {

class Progress {
 public:
  // `total` in arbitrary units (bytes, tensors); 0 = unknown.
  Progress(std::string label, uint64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Sets the amount done; redraws at most ~10 times a second and only after the first second.
  void Update(uint64_t done);
  // Erases the bar.
  void Finish();

  // Returns true when progress bars are drawn (stderr is a TTY and CLOVER_NO_PROGRESS unset).
  static bool Enabled();

 private:
  std::string label_;
  uint64_t total_;
  bool drawn_ = false;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace clover
