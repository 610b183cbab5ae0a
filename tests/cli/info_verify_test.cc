// `clover info` / `clover verify` end to end on the goldens, the shipped model and broken copies.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "io/safetensors.h"

namespace clover::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::RunClover;
using testing::RunResult;

const std::string kGolden = std::string(CLOVER_SHARED_DIR) + "/golden/";
const std::string kShipped = std::string(CLOVER_SOURCE_DIR) + "/models/clover-tiny-random";

json RunJson(const std::string& args) {
  RunResult r = RunClover(args);
  EXPECT_EQ(r.rc, 0) << args << "\n" << r.err;
  return json::parse(r.out, nullptr, false);
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("clover_cli_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(InfoTest, Qwen35MoeTinyHfAndGgufReportIdenticalHparams) {
  json hf = RunJson("info --json " + kGolden + "qwen35moe-tiny/hf");
  json gguf = RunJson("info --json " + kGolden + "qwen35moe-tiny/model-f32.gguf");
  ASSERT_FALSE(hf.is_discarded());
  ASSERT_FALSE(gguf.is_discarded());
  EXPECT_EQ(hf["hparams"], gguf["hparams"]);
  EXPECT_EQ(hf["family"], "qwen35moe");
  EXPECT_EQ(gguf["architecture"], "qwen35moe");
  EXPECT_EQ(hf["architecture"], "qwen3_5_moe");
  EXPECT_EQ(hf["params"]["total"], gguf["params"]["total"]);
  EXPECT_EQ(hf["params"]["active"], gguf["params"]["active"]);
  EXPECT_EQ(hf["hparams"]["rms_norm_eps"], 1e-6);
  // 8 experts x 3 x 32 x 64 per layer, 6 of them inactive per token.
  EXPECT_EQ(gguf["params"]["total"].get<int64_t>() - gguf["params"]["active"].get<int64_t>(), 4 * 6 * 3 * 32 * 64);
  EXPECT_EQ(gguf["tensors"]["in_files"], 76);
  EXPECT_EQ(gguf["tensors"]["dtypes"]["F32"]["tensors"], 76);
  // One attention layer: K and V, 2 kv heads x 32, F32, 4096 positions.
  EXPECT_EQ(gguf["memory_per_sequence"]["kv_cache_bytes"], 2 * 64 * 4096 * 4);
  // Three GDN layers: state 4 x 16 x 16 plus 3 conv rows of 128 channels, F32.
  EXPECT_EQ(gguf["memory_per_sequence"]["gdn_state_bytes"], 3 * (4 * 16 * 16 + 3 * 128) * 4);
  json small = RunJson("info --json --ctx 100 " + kGolden + "qwen35moe-tiny/model-f32.gguf");
  EXPECT_EQ(small["memory_per_sequence"]["kv_cache_bytes"], 2 * 64 * 100 * 4);
}

TEST(InfoTest, CloverTinyHfAndGgufReportIdenticalHparams) {
  json hf = RunJson("info --json " + kGolden + "clover-tiny/hf");
  json gguf = RunJson("info --json " + kGolden + "clover-tiny/model-f32.gguf");
  EXPECT_EQ(hf["hparams"], gguf["hparams"]);
  EXPECT_EQ(hf["family"], "clover_moe");
  EXPECT_EQ(hf["hparams"]["tokens"]["mask"], 511);
  EXPECT_EQ(hf["hparams"]["diffusion"]["preview_gdn"], "bidirectional");
  EXPECT_EQ(hf["hparams"]["diffusion"]["coreset_mass"], 0.9);
}

TEST(InfoTest, HumanOutputAndErrors) {
  RunResult r = RunClover("info " + kShipped);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("family:       clover_moe"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("params:"), std::string::npos);
  RunResult missing = RunClover("info /nonexistent/model.gguf");
  EXPECT_NE(missing.rc, 0);
  EXPECT_EQ(missing.err, "clover: error: model path '/nonexistent/model.gguf' does not exist\n");
}

TEST(VerifyTest, ShippedModelPassesWithSidecar) {
  RunResult r = RunClover("verify " + kShipped);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("model.safetensors: OK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verify: OK"), std::string::npos) << r.out;
}

TEST(VerifyTest, TamperedCopyFails) {
  TempDir dir;
  fs::copy(kShipped, dir.path(), fs::copy_options::recursive);
  {
    std::fstream f(dir.path() / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('\x7f');
  }
  RunResult r = RunClover("verify " + dir.path().string());
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("FAILED (digest mismatch)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("sha256 mismatch"), std::string::npos) << r.err;
  json j = json::parse(RunClover("verify --json " + dir.path().string()).out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_TRUE(j["structure"]["ok"].get<bool>());  // only the digest is wrong
}

TEST(VerifyTest, DeepScanReportsEveryTensor) {
  json j = RunJson("verify --deep --json " + kGolden + "qwen35moe-tiny/model-f32.gguf");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["ok"].get<bool>());
  ASSERT_EQ(j["deep"].size(), 76u);
  for (const json& t : j["deep"]) {
    EXPECT_TRUE(t["ok"].get<bool>()) << t.dump();
    EXPECT_LE(t["min"].get<double>(), t["mean"].get<double>());
    EXPECT_LE(t["mean"].get<double>(), t["max"].get<double>());
  }
}

TEST(VerifyTest, DeepScanFindsNaN) {
  TempDir dir;
  fs::copy_file(kShipped + "/config.json", dir.path() / "config.json");
  fs::copy_file(kShipped + "/model.safetensors", dir.path() / "model.safetensors");
  const std::string file = (dir.path() / "model.safetensors").string();
  uint64_t at = 0;
  {
    auto st = io::SafetensorsFile::Open(file);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    const io::SafetensorsTensor* t = (*st)->Find("model.norm.weight");
    ASSERT_NE(t, nullptr);
    at = static_cast<uint64_t>(t->view.bytes() - (*st)->file()->data());
  }
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    const float nan = std::nanf("");
    f.write(reinterpret_cast<const char*>(&nan), 4);
  }
  EXPECT_EQ(RunClover("verify " + dir.path().string()).rc, 0);  // structure alone is fine
  RunResult r = RunClover("verify --deep " + dir.path().string());
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("NaN 1 Inf 0 FAILED"), std::string::npos) << r.out;
}

TEST(VerifyTest, StructuralErrorsFail) {
  TempDir dir;
  const fs::path gguf = dir.path() / "broken.gguf";
  fs::copy_file(kGolden + "qwen35moe-tiny/model-f32.gguf", gguf);
  fs::resize_file(gguf, fs::file_size(gguf) - 1000);
  RunResult r = RunClover("verify " + gguf.string());
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("structure: FAILED"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("runs past the end of the file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace clover::cli
