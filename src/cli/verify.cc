// `clover verify MODEL`: sha256 sidecars, structural validity, tensor-map completeness, --deep scan.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/progress.h"
#include "io/sha256.h"
#include "kernels/ref/dequantize.h"
#include "model/loader.h"
#include "model/tensor_map.h"

namespace clover::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct VerifyOptions {
  std::string model;
  bool deep = false;
  bool json = false;
};

// Sidecars to check: `<file>.sha256` of every model file, and every *.sha256 of a model directory.
std::vector<std::string> FindSidecars(const std::string& path, const model::ModelFiles* files) {
  std::set<std::string> out;
  std::vector<std::string> candidates = {path};
  if (files != nullptr) {
    candidates.insert(candidates.end(), files->data_files.begin(), files->data_files.end());
    for (const std::string* p : {&files->config_path, &files->index_path, &files->generation_config_path}) {
      if (!p->empty()) candidates.push_back(*p);
    }
  }
  std::error_code ec;
  for (const std::string& c : candidates) {
    if (fs::is_regular_file(c + ".sha256", ec)) out.insert(fs::path(c + ".sha256").lexically_normal().string());
  }
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".sha256") {
        out.insert(entry.path().lexically_normal().string());
      }
    }
  }
  return {out.begin(), out.end()};
}

struct Check {
  bool ok = true;
  json j = json::array();
};

Check CheckSidecars(const std::vector<std::string>& sidecars, bool quiet) {
  Check check;
  for (const std::string& sidecar : sidecars) {
    std::ifstream in(sidecar);
    std::stringstream ss;
    ss << in.rdbuf();
    auto entries = io::ParseSha256Sidecar(ss.str(), sidecar);
    if (!entries.ok()) {
      check.ok = false;
      check.j.push_back({{"sidecar", sidecar}, {"ok", false}, {"error", entries.status().message()}});
      if (!quiet) std::printf("sha256  %s: FAILED (%s)\n", sidecar.c_str(), entries.status().message().c_str());
      continue;
    }
    for (const io::Sha256Entry& e : *entries) {
      const std::string file = (fs::path(sidecar).parent_path() / e.name).string();
      std::error_code ec;
      const uint64_t size = fs::is_regular_file(file, ec) ? fs::file_size(file, ec) : 0;
      Progress progress("sha256 " + e.name, size);
      auto hex = io::Sha256File(file, [&](uint64_t done) { progress.Update(done); });
      progress.Finish();
      const bool ok = hex.ok() && *hex == e.hex;
      check.ok = check.ok && ok;
      json item = {{"sidecar", sidecar}, {"file", file}, {"expected", e.hex}, {"ok", ok}};
      if (hex.ok()) item["actual"] = *hex;
      else item["error"] = hex.status().message();
      check.j.push_back(item);
      if (!quiet) {
        std::printf("sha256  %s: %s\n", file.c_str(),
                    ok ? "OK" : (hex.ok() ? "FAILED (digest mismatch)" : ("FAILED (" + hex.status().message() + ")").c_str()));
      }
    }
  }
  return check;
}

struct TensorStats {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;
  int64_t count = 0, nan = 0, inf = 0;
};

// Dequantizes every tensor row by row; NaN/Inf are counted and excluded from min/max/mean.
Check DeepScan(const model::OpenedModel& m, bool quiet) {
  Check check;
  uint64_t total = 0, done = 0;
  for (const auto& [name, t] : m.tensors) total += t.view.nbytes;
  Progress progress("deep scan", total);
  std::vector<float> row;
  for (const auto& [name, t] : m.tensors) {
    const TensorView& v = t.view;
    json item = {{"tensor", name}, {"dtype", DTypeName(v.dtype)}, {"shape", v.shape}};
    if (!kernels::ref::DequantizeSupported(v.dtype)) {
      item["scanned"] = false;
      check.j.push_back(item);
      if (!quiet) std::printf("  %-48s %-6s %s not scanned (integer data)\n", name.c_str(), DTypeName(v.dtype),
                              ShapeToString(v.shape).c_str());
      continue;
    }
    TensorStats s;
    row.resize(static_cast<size_t>(v.cols()));
    for (int64_t r = 0; r < v.rows(); ++r) {
      Status st = kernels::ref::DequantizeRow(v.dtype, v.bytes() + r * v.row_bytes(), v.cols(), row.data());
      if (!st.ok()) {
        s.nan = -1;
        break;
      }
      for (float x : row) {
        if (std::isnan(x)) { ++s.nan; continue; }
        if (std::isinf(x)) { ++s.inf; continue; }
        s.min = std::min<double>(s.min, x);
        s.max = std::max<double>(s.max, x);
        s.sum += x;
        ++s.count;
      }
    }
    done += v.nbytes;
    progress.Update(done);
    const bool ok = s.nan == 0 && s.inf == 0;
    check.ok = check.ok && ok;
    const double mean = s.count ? s.sum / s.count : 0.0;
    item["scanned"] = true;
    item["ok"] = ok;
    item["nan"] = s.nan;
    item["inf"] = s.inf;
    item["min"] = s.count ? json(s.min) : json(nullptr);
    item["max"] = s.count ? json(s.max) : json(nullptr);
    item["mean"] = mean;
    check.j.push_back(item);
    if (!quiet) {
      std::printf("  %-48s %-6s %-16s min %-12.6g max %-12.6g mean %-12.6g%s\n", name.c_str(), DTypeName(v.dtype),
                  ShapeToString(v.shape).c_str(), s.count ? s.min : 0.0, s.count ? s.max : 0.0, mean,
                  ok ? "" : (" NaN " + std::to_string(s.nan) + " Inf " + std::to_string(s.inf) + " FAILED").c_str());
    }
  }
  progress.Finish();
  return check;
}

int RunVerify(const VerifyOptions& o) {
  const bool quiet = o.json;
  json out = {{"model", o.model}};
  bool ok = true;
  std::vector<std::string> problems;

  auto files = model::ResolveModelPath(o.model);
  Check sha = CheckSidecars(FindSidecars(o.model, files.ok() ? &*files : nullptr), quiet);
  out["sha256"] = sha.j;
  if (!sha.ok) problems.push_back("sha256 mismatch");
  if (sha.j.empty() && !quiet) std::printf("sha256  no .sha256 sidecar files found\n");

  auto opened = model::OpenModel(o.model);
  out["structure"] = {{"ok", opened.ok()}};
  if (!opened.ok()) {
    out["structure"]["error"] = opened.status().message();
    problems.push_back(opened.status().message());
    if (!quiet) std::printf("structure: FAILED (%s)\n", opened.status().message().c_str());
  } else {
    if (!quiet) {
      std::printf("structure: OK (%zu tensors in %zu file%s)\n", opened->tensors.size(),
                  opened->files.data_files.size(), opened->files.data_files.size() == 1 ? "" : "s");
    }
    model::MapReport report;
    auto weights = model::BuildWeights(*opened, &report);
    out["tensor_map"] = {{"ok", weights.ok()}};
    if (!weights.ok()) {
      out["tensor_map"]["error"] = weights.status().message();
      problems.push_back(weights.status().message());
      if (!quiet) std::printf("tensor map: FAILED (%s)\n", weights.status().message().c_str());
    } else {
      out["tensor_map"]["mapped"] = report.mapped;
      out["tensor_map"]["ignored"] = report.ignored;
      if (!quiet) std::printf("tensor map: OK (%d mapped, %zu ignored)\n", report.mapped, report.ignored.size());
    }
    if (o.deep) {
      if (!quiet) std::printf("deep scan:\n");
      Check deep = DeepScan(*opened, quiet);
      out["deep"] = deep.j;
      if (!deep.ok) problems.push_back("NaN/Inf found by the deep scan");
    }
  }
  ok = problems.empty();
  out["ok"] = ok;
  if (o.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("verify: %s\n", ok ? "OK" : "FAILED");
  }
  if (ok) return 0;
  std::string what = o.model + ": verification failed: " + problems[0];
  if (problems.size() > 1) what += " (and " + std::to_string(problems.size() - 1) + " more)";
  return ReportError(DataLoss(what));
}

}  // namespace

void RegisterVerifyCommand(CLI::App& app) {
  auto opts = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Check sha256 sidecars, file structure and tensor-map completeness (--deep: NaN/Inf scan)");
  cmd->add_option("model", opts->model, "GGUF file, .safetensors file or model directory")->required();
  cmd->add_flag("--deep", opts->deep, "dequantize every tensor and report min/max/mean, failing on NaN/Inf");
  cmd->add_flag("--json", opts->json, "print JSON");
  cmd->callback([opts] { SetExitCode(RunVerify(*opts)); });
}

}  // namespace clover::cli
