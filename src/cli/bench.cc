// `clover bench [MODEL | --random NAME] [--threads N] [--json]`: prefill, decode, N-row append
// and N-row diffusion preview timings of the CPU forward, with the bytes decode and the N-row
// passes read and the memory bandwidth (triad) of the same threads, so each time can be set
// against its limit.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/model_cli.h"
#include "cli/pass_bytes.h"
#include "core/memory_bandwidth.h"
#include "core/process_memory.h"
#include "model/random_weights.h"

namespace clover::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::string random;
  std::string dtype = "bf16";
  int threads = 0;
  int reps = 3;
  int64_t rows = 32;
  int64_t triad_mib = 128;
  bool json = false;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int32_t> Ids(int64_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> d(0, vocab - 1);
  std::vector<int32_t> ids(n);
  for (int32_t& id : ids) id = static_cast<int32_t>(d(rng));
  return ids;
}

// One timed N-row pass: its best wall time, the distinct experts per layer it ran, its bytes.
struct RowPass {
  std::string kind;  // "append" or "preview": the prefix of its JSON fields
  double seconds = 0;
  std::vector<int> distinct;
  PassBytes bytes;
};

// One decode repetition and the triad taken right before it.
struct PairedRep {
  double triad_bytes_per_second = 0;
  double seconds = 0;
};

// The median, lowest and highest of the paired repetitions' decode speed over the limit their own
// triad sets.
struct PairedShare {
  double median = 0, low = 0, high = 0;
  double triad_low = 0, triad_high = 0;  // bytes per second
};

PairedShare SharePaired(const std::vector<PairedRep>& reps, double tokens, double step_bytes) {
  std::vector<double> shares, triads;
  for (const PairedRep& r : reps) {
    shares.push_back((tokens / r.seconds) / (r.triad_bytes_per_second / step_bytes));
    triads.push_back(r.triad_bytes_per_second);
  }
  std::sort(shares.begin(), shares.end());
  std::sort(triads.begin(), triads.end());
  const size_t n = shares.size();
  PairedShare out;
  out.median = n % 2 == 1 ? shares[n / 2] : 0.5 * (shares[n / 2 - 1] + shares[n / 2]);
  out.low = shares.front();
  out.high = shares.back();
  out.triad_low = triads.front();
  out.triad_high = triads.back();
  return out;
}

// Returns the best of `reps` wall times of `fn` (seconds), after one warm-up run.
template <typename Fn>
Result<double> BestOf(int reps, Fn fn) {
  CLOVER_TRY(fn().status());
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const double t0 = Now();
    CLOVER_TRY(fn().status());
    best = std::min(best, Now() - t0);
  }
  return best;
}

Status RunBench(const BenchOptions& opts) {
  if (opts.model.empty() == opts.random.empty()) {
    return InvalidArgument("bench: give either MODEL or --random NAME (tiny, medium)");
  }
  if (opts.reps < 1 || opts.rows < 1 || opts.triad_mib < 1) {
    return InvalidArgument("bench: --reps " + std::to_string(opts.reps) + ", --rows " +
                           std::to_string(opts.rows) + " and --triad-mib " +
                           std::to_string(opts.triad_mib) + " must be >= 1");
  }
  std::unique_ptr<Engine> engine;
  std::string name = opts.model;
  if (!opts.random.empty()) {
    CLOVER_ASSIGN_OR_RETURN(model::ModelConfig config, model::RandomModelConfig(opts.random));
    DType dtype;
    if (opts.dtype == "f32")
      dtype = DType::kF32;
    else if (opts.dtype == "bf16")
      dtype = DType::kBF16;
    else if (opts.dtype == "f16")
      dtype = DType::kF16;
    else
      return InvalidArgument("--dtype: '" + opts.dtype + "', expected f32, bf16 or f16");
    CLOVER_ASSIGN_OR_RETURN(engine,
                            MakeEngine(model::MakeRandomWeights(config, 1, dtype), opts.threads));
    name = "random:" + opts.random + ":" + opts.dtype;
  }
  // A file loads by mapping it: the load and the first token should cost what they touch, not
  // the file's size (the experts one token does not route to stay unread).
  CLOVER_ASSIGN_OR_RETURN(const int64_t rss_before, ResidentBytes());
  const double t_load0 = Now();
  if (opts.random.empty()) {
    CLOVER_ASSIGN_OR_RETURN(engine, LoadEngine(opts.model, opts.threads));
  }
  const double load_s = Now() - t_load0;
  CLOVER_ASSIGN_OR_RETURN(const int64_t rss_loaded, ResidentBytes());
  const int64_t vocab = engine->model->config().vocab_size;
  double first_token_s = 0;
  {
    model::SequenceState first = engine->model->NewSequence();
    const double t0 = Now();
    CLOVER_TRY(AppendTokens(*engine, first, Ids(1, vocab, 3), {0}).status());
    first_token_s = Now() - t0;
  }
  CLOVER_ASSIGN_OR_RETURN(const int64_t rss_first, ResidentBytes());
  const model::ModelWeights& weights = engine->model->weights();
  model::SequenceState seq = engine->model->NewSequence();
  // Before the timed forwards; the arrays stay for the triads paired with the decode repetitions.
  TriadArrays triad(*engine->pool, static_cast<uint64_t>(opts.triad_mib) << 20);
  const TriadBandwidth bw = triad.Measure(5);

  auto prefill = [&](int64_t n) -> Result<double> {
    const std::vector<int32_t> ids = Ids(n, vocab, n);
    CLOVER_ASSIGN_OR_RETURN(double t, BestOf(opts.reps, [&] {
                              seq.Reset();
                              return AppendTokens(*engine, seq, ids, {n - 1});
                            }));
    return n / t;
  };
  CLOVER_ASSIGN_OR_RETURN(double pp64, prefill(64));
  CLOVER_ASSIGN_OR_RETURN(double pp512, prefill(512));

  // Decode and the N-row pass continue from a 64-token prompt.
  constexpr int64_t kPrompt = 64;
  const std::vector<int32_t> prompt = Ids(kPrompt, vocab, 7);
  seq.Reset();
  CLOVER_TRY(AppendTokens(*engine, seq, prompt, {kPrompt - 1}).status());
  const model::SequenceSnapshot after_prompt = seq.Snapshot();
  constexpr int64_t kDecode = 32;
  const std::vector<int32_t> steps = Ids(kDecode, vocab, 9);
  // Every repetition decodes the same ids, so the experts the last one ran are each one's.
  std::vector<std::vector<int>> step_distinct(kDecode);
  auto decode_steps = [&]() -> Result<model::ForwardLogits> {
    seq.Restore(after_prompt);
    Result<model::ForwardLogits> out = InvalidArgument("no steps");
    for (int64_t i = 0; i < kDecode; ++i) {
      out = AppendTokens(*engine, seq, {steps[i]}, {0});
      if (!out.ok()) return out;
      step_distinct[i] = out->distinct_experts;
    }
    return out;
  };
  // Each timed repetition right after a triad of its own: the pair sees the same memory, where
  // the bandwidth measured once may be seconds away from a given repetition.
  CLOVER_TRY(decode_steps().status());
  double t_tg = 1e300;
  std::vector<PairedRep> paired;
  for (int rep = 0; rep < opts.reps; ++rep) {
    const double rep_triad = triad.Measure(3).bytes_per_second;
    const double t0 = Now();
    CLOVER_TRY(decode_steps().status());
    const double seconds = Now() - t0;
    t_tg = std::min(t_tg, seconds);
    paired.push_back({rep_triad, seconds});
  }
  PassBytes tg_bytes;
  double tg_distinct = 0;
  for (int64_t i = 0; i < kDecode; ++i) {
    const PassBytes b = CountPassBytes(weights, step_distinct[i], kPrompt + i, 1, 1);
    tg_bytes.weights += b.weights;
    tg_bytes.state += b.state;
    for (int d : step_distinct[i]) tg_distinct += d;
  }
  const std::vector<int32_t> block = Ids(opts.rows, vocab, 11);
  std::vector<int64_t> all_rows(opts.rows);
  for (int64_t i = 0; i < opts.rows; ++i) all_rows[i] = i;
  RowPass append;
  append.kind = "append";
  CLOVER_ASSIGN_OR_RETURN(append.seconds, BestOf(opts.reps, [&] {
                            seq.Restore(after_prompt);
                            Result<model::ForwardLogits> out =
                                AppendTokens(*engine, seq, block, all_rows);
                            if (out.ok()) append.distinct = out->distinct_experts;
                            return out;
                          }));
  seq.Restore(after_prompt);
  append.bytes = CountPassBytes(weights, append.distinct, kPrompt, opts.rows, opts.rows);
  // The same rows as one diffusion preview pass (read-only, coreset MoE; clover-spec.md §4) after
  // the prompt, every row's logits: what one step of block diffusion costs.
  RowPass preview;
  preview.kind = "preview";
  CLOVER_ASSIGN_OR_RETURN(preview.seconds, BestOf(opts.reps, [&] {
                            model::ForwardBatch batch;
                            batch.previews.push_back({&seq, block, kPrompt, all_rows});
                            Result<model::ForwardLogits> out =
                                engine->model->Forward(batch, engine->scratch);
                            if (out.ok()) preview.distinct = out->distinct_experts;
                            return out;
                          }));
  preview.bytes = CountPassBytes(weights, preview.distinct, kPrompt, opts.rows, opts.rows,
                                 engine->model->preview_gdn() == model::PreviewGdn::kBidirectional);

  const double tg = kDecode / t_tg;
  const double step_bytes = static_cast<double>(tg_bytes.total()) / kDecode;
  const double tg_limit = bw.bytes_per_second / step_bytes;
  const PairedShare tg_paired = SharePaired(paired, kDecode, step_bytes);
  const int moe_layers = static_cast<int>(
      std::count_if(weights.layers.begin(), weights.layers.end(),
                    [](const model::LayerWeights& l) { return !l.moe.expert_gate.empty(); }));
  const double tg_distinct_per_layer = tg_distinct / kDecode / std::max(1, moe_layers);
  const std::string isa = IsaName(engine->table->isa);
  // How the model file's page cache is mapped after the run (MappedFile asks for huge pages).
  FileMappingResidency mapped;
  if (opts.random.empty()) {
    std::error_code ec;
    const std::filesystem::path file = std::filesystem::canonical(opts.model, ec);
    if (!ec) {
      CLOVER_ASSIGN_OR_RETURN(mapped, MappedFileResidency(file.string()));
    }
  }
  const double huge_share =
      mapped.resident_bytes > 0
          ? static_cast<double>(mapped.huge_page_bytes) / static_cast<double>(mapped.resident_bytes)
          : 0.0;
  if (opts.json) {
    nlohmann::json j = {
        {"model", name},
        {"threads", engine->pool->size()},
        {"isa", isa},
        {"triad_gb_s", bw.bytes_per_second * 1e-9},
        {"triad_array_bytes", bw.array_bytes},
        {"pp64_tok_s", pp64},
        {"pp512_tok_s", pp512},
        {"tg32_tok_s", tg},
        {"tg32_bytes_per_step", step_bytes},
        {"tg32_weight_bytes_per_step", static_cast<double>(tg_bytes.weights) / kDecode},
        {"tg32_state_bytes_per_step", static_cast<double>(tg_bytes.state) / kDecode},
        {"tg32_distinct_experts_per_layer", tg_distinct_per_layer},
        {"tg32_limit_tok_s", tg_limit},
        {"tg32_of_limit", tg / tg_limit},
        {"tg32_paired_of_limit", tg_paired.median},
        {"tg32_paired_of_limit_low", tg_paired.low},
        {"tg32_paired_of_limit_high", tg_paired.high},
        {"tg32_paired_triad_gb_s_low", tg_paired.triad_low * 1e-9},
        {"tg32_paired_triad_gb_s_high", tg_paired.triad_high * 1e-9},
        {"append_rows", opts.rows},
        {"first_token_ms", first_token_s * 1e3},
        {"first_token_resident_bytes", rss_first - rss_before}};
    if (opts.random.empty()) {
      j["load_ms"] = load_s * 1e3;
      j["load_resident_bytes"] = rss_loaded - rss_before;
      j["weights_resident_bytes"] = mapped.resident_bytes;
      j["weights_huge_page_bytes"] = mapped.huge_page_bytes;
    }
    for (const RowPass* p : {&append, &preview}) {
      const double limit_s = static_cast<double>(p->bytes.total()) / bw.bytes_per_second;
      j[p->kind + "_ms"] = p->seconds * 1e3;
      j[p->kind + "_distinct_experts"] = p->distinct;
      j[p->kind + "_bytes"] = p->bytes.total();
      j[p->kind + "_weight_bytes"] = p->bytes.weights;
      j[p->kind + "_state_bytes"] = p->bytes.state;
      j[p->kind + "_limit_ms"] = limit_s * 1e3;
      j[p->kind + "_of_limit"] = limit_s / p->seconds;
      j[p->kind + "_per_step"] = p->seconds * tg;
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("model    %s\nthreads  %d\nisa      %s\n", name.c_str(), engine->pool->size(),
                isa.c_str());
    if (opts.random.empty()) {
      std::printf("load     %.0f ms, %.1f MB resident\n", load_s * 1e3,
                  static_cast<double>(rss_loaded - rss_before) * 1e-6);
    }
    std::printf("first token %.1f ms, %.1f MB resident\n", first_token_s * 1e3,
                static_cast<double>(rss_first - rss_before) * 1e-6);
    std::printf("triad    %.1f GB/s (3 arrays of %.0f MiB)\n", bw.bytes_per_second * 1e-9,
                static_cast<double>(bw.array_bytes) / (1 << 20));
    std::printf("%-18s %16s %12s %16s %9s\n", "test", "result", "MB/pass", "limit", "of limit");
    std::printf("%-18s %10.1f tok/s\n", "pp64", pp64);
    std::printf("%-18s %10.1f tok/s\n", "pp512", pp512);
    std::printf("%-18s %10.1f tok/s %12.1f %10.1f tok/s %8.0f%%\n", "tg32", tg, step_bytes * 1e-6,
                tg_limit, 100.0 * tg / tg_limit);
    std::printf(
        "%-18s %d repetitions each after its own triad (%.1f-%.1f GB/s): median %.0f%% "
        "of limit (%.0f-%.0f%%)\n",
        "tg32 paired", opts.reps, tg_paired.triad_low * 1e-9, tg_paired.triad_high * 1e-9,
        100.0 * tg_paired.median, 100.0 * tg_paired.low, 100.0 * tg_paired.high);
    for (const RowPass* p : {&append, &preview}) {
      const double limit_s = static_cast<double>(p->bytes.total()) / bw.bytes_per_second;
      std::printf("%-18s %13.2f ms %12.1f %13.2f ms %8.0f%%\n",
                  (p->kind + " " + std::to_string(opts.rows) + " rows").c_str(), p->seconds * 1e3,
                  static_cast<double>(p->bytes.total()) * 1e-6, limit_s * 1e3,
                  100.0 * limit_s / p->seconds);
    }
    std::printf("per decode step: append %.2fx, preview %.2fx\n", append.seconds * tg,
                preview.seconds * tg);
    std::printf("distinct experts per layer: decode %.1f\n", tg_distinct_per_layer);
    if (opts.random.empty()) {
      std::printf("weights  %.1f MB resident, %.0f%% in 2 MiB pages\n",
                  static_cast<double>(mapped.resident_bytes) * 1e-6, 100.0 * huge_share);
      // Below this the one-row kernels stall on 4 KiB page walks (docs/benchmarks.md).
      if (mapped.resident_bytes > (int64_t{256} << 20) && huge_share < 0.5) {
        std::printf(
            "         the file's page cache is in 4 KiB pages (written or read without huge-page "
            "advice); decode reads it up to 2x slower until the file is evicted and read back\n");
      }
    }
    for (const RowPass* p : {&append, &preview}) {
      std::printf("  %s:", p->kind.c_str());
      for (int d : p->distinct) std::printf(" %d", d);
      std::printf("\n");
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterBenchCommand(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "measure prefill (pp64, pp512), decode (tg32) and one N-row pass, the bytes decode and the "
      "pass read, and the memory bandwidth (triad) of the same threads");
  cmd->add_option("model", opts->model, "GGUF file, .safetensors file or model directory");
  cmd->add_option("--random", opts->random, "benchmark a random model instead: tiny or medium");
  cmd->add_option("--dtype", opts->dtype, "weight dtype of --random: f32, bf16 (default) or f16");
  cmd->add_option("--rows", opts->rows, "rows of the single append pass (default 32)");
  cmd->add_option("--reps", opts->reps, "timed repetitions, best kept (default 3)");
  cmd->add_option("--triad-mib", opts->triad_mib,
                  "MiB per array of the bandwidth triad, well above the L3 (default 128)");
  cmd->add_flag("--json", opts->json, "print JSON");
  AddThreadsOption(cmd, &opts->threads);
  cmd->callback([opts] {
    Status s = RunBench(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
