// Tokenizer benchmarks: encode throughput on a mixed ~10 MB corpus (one thread) and the load time
// of Qwen3's tokenizer.json. Run: build/bench/tokenizer_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.h"

namespace {

std::string SharedDir() {
  if (const char* dir = std::getenv("CLOVER_SHARED_DIR")) return dir;
  const std::string file = __FILE__;
  return file.substr(0, file.rfind("/bench/")) + "/../shared";
}

std::string TokenizerPath() { return SharedDir() + "/golden/tokenizer/qwen3/tokenizer.json"; }

const clover::tokenizer::Tokenizer& Qwen3() {
  static const clover::tokenizer::Tokenizer* tok = [] {
    auto r = clover::tokenizer::Tokenizer::FromJsonFile(TokenizerPath());
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().message().c_str());
      std::abort();
    }
    return new clover::tokenizer::Tokenizer(std::move(r).value());
  }();
  return *tok;
}

// ~10 MB of documents drawn with a fixed seed from the golden texts (prose, code, CJK and other
// scripts, emoji, numbers) and the five chat templates (Jinja/markup-heavy text).
const std::vector<std::string>& Corpus() {
  static const std::vector<std::string> docs = [] {
    std::vector<std::string> pieces;
    std::ifstream in(SharedDir() + "/golden/tokenizer/qwen3_encode.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line);
      if (j["cat"] != "special_tokens") pieces.push_back(j["text"].get<std::string>());
    }
    for (const char* t : {"qwen3", "qwen3.5", "qwen3.6"}) {
      std::ifstream tf(SharedDir() + "/golden/tokenizer/templates/" + t + ".jinja");
      pieces.emplace_back(std::istreambuf_iterator<char>(tf), std::istreambuf_iterator<char>());
    }
    std::mt19937 rng(1234);
    std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
    std::vector<std::string> out;
    size_t total = 0;
    constexpr size_t kTotalBytes = 10u << 20;
    constexpr size_t kDocBytes = 4096;
    std::string doc;
    while (total < kTotalBytes) {
      doc += pieces[pick(rng)];
      doc += rng() % 3 == 0 ? "\n\n" : " ";
      if (doc.size() >= kDocBytes) {
        total += doc.size();
        out.push_back(std::move(doc));
        doc.clear();
      }
    }
    return out;
  }();
  return docs;
}

void BM_EncodeMixedCorpus(benchmark::State& state) {
  const auto& tok = Qwen3();
  const auto& docs = Corpus();
  size_t bytes = 0, tokens = 0;
  for (auto _ : state) {
    for (const std::string& d : docs) {
      auto ids = tok.Encode(d);
      tokens += ids.size();
      bytes += d.size();
      benchmark::DoNotOptimize(ids.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EncodeMixedCorpus)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_DecodeMixedCorpus(benchmark::State& state) {
  const auto& tok = Qwen3();
  std::vector<std::vector<int32_t>> encoded;
  size_t bytes = 0;
  for (const std::string& d : Corpus()) {
    encoded.push_back(tok.Encode(d));
    bytes += d.size();
  }
  for (auto _ : state) {
    for (const auto& ids : encoded) benchmark::DoNotOptimize(tok.Decode(ids));
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes * state.iterations()));
}
BENCHMARK(BM_DecodeMixedCorpus)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_LoadQwen3TokenizerJson(benchmark::State& state) {
  for (auto _ : state) {
    auto t = clover::tokenizer::Tokenizer::FromJsonFile(TokenizerPath());
    if (!t.ok()) state.SkipWithError(t.status().message().c_str());
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_LoadQwen3TokenizerJson)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
