// Helpers for the suites that run the `clover` binary: run it, capture stdout/stderr and exit code.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace clover::cli::testing {

struct RunResult {
  int rc = -1;
  std::string out;
  std::string err;
};

// Runs `clover ARGS` (progress bars off) and returns its exit code and output.
inline RunResult RunClover(const std::string& args) {
  namespace fs = std::filesystem;
  const fs::path err_file =
      fs::temp_directory_path() / ("clover_cli_err_" + std::to_string(::getpid()));
  const std::string cmd =
      std::string("CLOVER_NO_PROGRESS=1 ") + CLOVER_BINARY + " " + args + " 2>" + err_file.string();
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  fs::remove(err_file);
  return r;
}

// A fresh directory under the system temp dir, removed with its contents on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("clover_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace clover::cli::testing
