// `clover bench-http` against a real `clover serve` of the demo model: A/B rows and ratios.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_util.h"

namespace clover::cli {
namespace {

namespace fs = std::filesystem;
using testing::RunClover;

const fs::path kDemo = fs::path(CLOVER_SOURCE_DIR) / "models" / "clover-demo";

// A `clover serve` child on a free loopback port, killed (SIGTERM) on destruction.
class ServerProcess {
 public:
  ServerProcess() {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, 2);
      ::close(fds[0]);
      ::execl(CLOVER_BINARY, CLOVER_BINARY, "serve", kDemo.c_str(), "--port", "0", "--parallel", "2",
              "--threads", "1", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    FILE* out = ::fdopen(fds[0], "r");
    char line[256];
    if (out != nullptr && std::fgets(line, sizeof line, out) != nullptr) {
      const std::string s(line);
      const size_t colon = s.rfind(':');
      if (s.find("listening on http://") != std::string::npos && colon != std::string::npos)
        port_ = std::stoi(s.substr(colon + 1));
    }
    out_ = out;
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (out_ != nullptr) std::fclose(out_);
  }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  FILE* out_ = nullptr;
};

TEST(BenchHttpTest, PairedDiffusionVersusArOnTheDemoServer) {
  if (!fs::exists(kDemo / "config.json")) GTEST_SKIP() << "models/clover-demo is not there";
  ServerProcess server;
  ASSERT_GT(server.port(), 0) << "the server did not print its port";
  const fs::path workload = fs::temp_directory_path() / "clover_bench_http_test.jsonl";
  {
    std::ofstream w(workload);
    w << R"({"messages": [{"role": "user", "content": "What is the capital of France?"}], "enable_thinking": false, "temperature": 0, "max_tokens": 32})"
      << "\n"
      << R"({"messages": [{"role": "user", "content": "Say hello."}], "enable_thinking": false, "temperature": 0, "max_tokens": 32})"
      << "\n";
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const auto [rc, out, err] = RunClover("bench-http --url " + url + " --workload " + workload.string() +
                                " --extra-a '{\"clover\": {\"decoder\": \"diffusion\"}}'" +
                                " --extra-b '{\"clover\": {\"decoder\": \"ar\"}}'" +
                                " --concurrency 2 --repeat 2 --tokenizer " + kDemo.string() + " --json");
  ASSERT_EQ(rc, 0) << out << err;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["requests_per_variant"], 4);
  for (const char* v : {"a", "b"}) {
    EXPECT_EQ(j[v]["requests"], 4) << v;
    EXPECT_EQ(j[v]["failed"], 0) << v;
    EXPECT_GT(j[v]["output_tokens"].get<int64_t>(), 8) << v;
    EXPECT_GT(j[v]["output_tok_s"].get<double>(), 0.0) << v;
    EXPECT_LE(j[v]["ttft_p50_s"].get<double>(), j[v]["latency_p50_s"].get<double>() + 1e-9) << v;
  }
  // Both decoders say the same thing, so the token counts agree.
  EXPECT_EQ(j["a"]["output_tokens"], j["b"]["output_tokens"]);
  EXPECT_EQ(j["ratio_b_over_a"]["pairs"], 4);
  EXPECT_GT(j["ratio_b_over_a"]["geomean"].get<double>(), 0.0);

  // A server that is not there: a clear failure, not a hang.
  const auto [rc2, out2, err2] = RunClover("bench-http --url http://127.0.0.1:1 --workload " + workload.string() +
                                  " --tokenizer " + kDemo.string() + " --timeout 5");
  EXPECT_NE(rc2, 0);
  EXPECT_NE(err2.find("failed"), std::string::npos) << err2;
  fs::remove(workload);
}

}  // namespace
}  // namespace clover::cli
