// `clover bench-http`: a paired A/B load client for OpenAI-compatible servers. Each workload
// request runs once per variant, back to back in one worker (order alternating between pairs, so
// drift hits both sides alike); throughput counts the visible text (content + reasoning)
// retokenized with one tokenizer, so servers with different tokenizers or decoders compare fairly.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "cli/command.h"
#include "cli/model_cli.h"
#include "tokenizer/source_loader.h"

namespace clover::cli {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct BenchHttpOptions {
  std::string url;
  std::string url_b;
  std::string extra_a = "{}";  // merged into every request of variant A
  std::string extra_b;         // variant B's ("" = same as A)
  std::string workload;
  std::string tokenizer;  // "" = the demo model's
  std::string api_key;
  int concurrency = 1;
  int repeat = 1;
  double timeout_s = 300;
  bool json = false;
};

struct Target {
  std::string host;
  int port = 0;
};

Result<Target> ParseUrl(const std::string& url) {
  static const std::regex re(R"(^http://([^/:]+)(?::(\d+))?/?$)");
  std::smatch m;
  if (!std::regex_match(url, m, re))
    return InvalidArgument("bench-http: URL '" + url + "': expected http://HOST[:PORT]");
  return Target{m[1].str(), m[2].matched ? std::stoi(m[2].str()) : 80};
}

// One request's measurements.
struct Sample {
  bool ok = false;
  std::string error;
  double latency = 0.0;  // seconds, request to the end of the stream
  double ttft = 0.0;     // seconds to the first visible text
  int64_t tokens = 0;    // visible text retokenized
};

// Streams one chat completion and measures it.
Sample RunOne(const Target& t, const std::string& api_key, json body, double timeout_s,
              const tokenizer::Tokenizer& tok) {
  body["stream"] = true;
  httplib::Client client(t.host, t.port);
  client.set_read_timeout(static_cast<time_t>(timeout_s));
  client.set_connection_timeout(10);
  httplib::Headers headers;
  if (!api_key.empty()) headers.emplace("Authorization", "Bearer " + api_key);
  Sample s;
  std::string text, pending;
  bool first = true;
  const auto start = Clock::now();
  auto seconds = [&start] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.headers = headers;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  std::string error_body;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    pending.append(data, n);
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      const std::string line = pending.substr(0, nl);
      if (line.rfind("data: ", 0) != 0) {
        error_body += line;
        continue;
      }
      const std::string payload = line.substr(6);
      if (payload == "[DONE]") continue;
      const json chunk = json::parse(payload, nullptr, false);
      if (chunk.is_discarded() || !chunk.contains("choices") || chunk["choices"].empty()) continue;
      const json& delta = chunk["choices"][0].value("delta", json::object());
      for (const char* key : {"reasoning_content", "content"}) {
        if (!delta.contains(key) || !delta[key].is_string()) continue;
        const std::string piece = delta[key];
        if (piece.empty()) continue;
        if (first) s.ttft = seconds();
        first = false;
        text += piece;
      }
    }
    return true;
  };
  auto res = client.send(req);
  s.latency = seconds();
  if (!res) {
    s.error = "no response (" + httplib::to_string(res.error()) + ")";
  } else if (res->status != 200) {
    s.error = "HTTP " + std::to_string(res->status) + " " + error_body + pending;
  } else {
    s.ok = true;
    s.tokens = static_cast<int64_t>(tok.Encode(text).size());
  }
  return s;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double at = p * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

struct VariantStats {
  int64_t ok = 0, failed = 0, tokens = 0;
  double busy = 0.0;  // summed latency of the requests
  std::vector<double> latency, ttft;
  std::string first_error;

  void Add(const Sample& s) {
    if (!s.ok) {
      ++failed;
      if (first_error.empty()) first_error = s.error;
      return;
    }
    ++ok;
    tokens += s.tokens;
    busy += s.latency;
    latency.push_back(s.latency);
    ttft.push_back(s.ttft);
  }
  // Throughput while `concurrency` workers share the time: requests (tokens) per second of busy
  // time per worker.
  json Json(int concurrency) const {
    const double time = busy / std::max(concurrency, 1);
    return {{"requests", ok},
            {"failed", failed},
            {"requests_per_s", time > 0 ? static_cast<double>(ok) / time : 0.0},
            {"output_tok_s", time > 0 ? static_cast<double>(tokens) / time : 0.0},
            {"output_tokens", tokens},
            {"ttft_p50_s", Percentile(ttft, 0.5)},
            {"ttft_p99_s", Percentile(ttft, 0.99)},
            {"latency_p50_s", Percentile(latency, 0.5)},
            {"latency_p99_s", Percentile(latency, 0.99)}};
  }
};

Result<std::vector<json>> LoadWorkload(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("bench-http: cannot open workload " + path);
  std::vector<json> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("messages"))
      return InvalidArgument(path + ":" + std::to_string(n) +
                             ": expected a JSON object with \"messages\" (a chat request body)");
    out.push_back(std::move(j));
  }
  if (out.empty()) return InvalidArgument("bench-http: workload " + path + " holds no requests");
  return out;
}

Result<json> ParseExtra(const std::string& text, const char* flag) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return InvalidArgument(std::string(flag) + ": expected a JSON object, found '" + text + "'");
  return j;
}

Status BenchHttp(BenchHttpOptions o) {
  if (o.concurrency < 1 || o.repeat < 1)
    return InvalidArgument("bench-http: --concurrency and --repeat must be >= 1");
  CLOVER_ASSIGN_OR_RETURN(Target a, ParseUrl(o.url));
  CLOVER_ASSIGN_OR_RETURN(Target b, ParseUrl(o.url_b.empty() ? o.url : o.url_b));
  CLOVER_ASSIGN_OR_RETURN(json extra_a, ParseExtra(o.extra_a, "--extra-a"));
  CLOVER_ASSIGN_OR_RETURN(json extra_b, ParseExtra(o.extra_b.empty() ? o.extra_a : o.extra_b, "--extra-b"));
  const bool paired = !o.url_b.empty() || !o.extra_b.empty();
  CLOVER_ASSIGN_OR_RETURN(std::vector<json> workload, LoadWorkload(o.workload));
  if (o.tokenizer.empty()) {
    CLOVER_ASSIGN_OR_RETURN(o.tokenizer, DemoModelPath("bench-http"));
  }
  CLOVER_ASSIGN_OR_RETURN(tokenizer::Tokenizer tok, tokenizer::LoadTokenizer(o.tokenizer));

  const size_t n_pairs = workload.size() * static_cast<size_t>(o.repeat);
  std::atomic<size_t> next{0};
  std::mutex mu;
  VariantStats stats_a, stats_b;
  std::vector<double> ratios;  // per pair: B's output tok/s over A's
  const auto start = Clock::now();
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n_pairs;) {
      json body_a = workload[i % workload.size()];
      json body_b = body_a;
      body_a.merge_patch(extra_a);
      body_b.merge_patch(extra_b);
      Sample sa, sb;
      if (!paired) {
        sa = RunOne(a, o.api_key, body_a, o.timeout_s, tok);
      } else if (i % 2 == 0) {
        sa = RunOne(a, o.api_key, body_a, o.timeout_s, tok);
        sb = RunOne(b, o.api_key, body_b, o.timeout_s, tok);
      } else {
        sb = RunOne(b, o.api_key, body_b, o.timeout_s, tok);
        sa = RunOne(a, o.api_key, body_a, o.timeout_s, tok);
      }
      std::lock_guard<std::mutex> lock(mu);
      stats_a.Add(sa);
      if (!paired) continue;
      stats_b.Add(sb);
      if (sa.ok && sb.ok && sa.tokens > 0 && sb.tokens > 0)
        ratios.push_back((static_cast<double>(sb.tokens) / sb.latency) /
                         (static_cast<double>(sa.tokens) / sa.latency));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < o.concurrency; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();

  json out = {{"workload", o.workload},
              {"requests_per_variant", n_pairs},
              {"concurrency", o.concurrency},
              {"wall_s", wall},
              {"a", stats_a.Json(o.concurrency)}};
  out["a"]["url"] = o.url;
  out["a"]["extra"] = extra_a;
  if (paired) {
    out["b"] = stats_b.Json(o.concurrency);
    out["b"]["url"] = o.url_b.empty() ? o.url : o.url_b;
    out["b"]["extra"] = extra_b;
    double log_sum = 0.0;
    for (double r : ratios) log_sum += std::log(r);
    out["ratio_b_over_a"] = {
        {"pairs", ratios.size()},
        {"geomean", ratios.empty() ? 0.0 : std::exp(log_sum / static_cast<double>(ratios.size()))},
        {"p10", Percentile(ratios, 0.1)},
        {"p50", Percentile(ratios, 0.5)},
        {"p90", Percentile(ratios, 0.9)}};
  }
  if (o.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("%-8s %8s %7s %10s %10s %10s %10s %10s %10s\n", "variant", "requests", "failed",
                "req/s", "tok/s", "ttft p50", "ttft p99", "lat p50", "lat p99");
    for (const char* v : {"a", "b"}) {
      if (!out.contains(v)) continue;
      const json& s = out[v];
      std::printf("%-8s %8lld %7lld %10.2f %10.1f %9.3fs %9.3fs %9.3fs %9.3fs\n", v,
                  static_cast<long long>(s["requests"].get<int64_t>()),
                  static_cast<long long>(s["failed"].get<int64_t>()), s["requests_per_s"].get<double>(),
                  s["output_tok_s"].get<double>(), s["ttft_p50_s"].get<double>(),
                  s["ttft_p99_s"].get<double>(), s["latency_p50_s"].get<double>(),
                  s["latency_p99_s"].get<double>());
    }
    if (paired) {
      const json& r = out["ratio_b_over_a"];
      std::printf("B/A output tok/s per pair: geomean %.3f (p10 %.3f, p50 %.3f, p90 %.3f) over %lld pairs\n",
                  r["geomean"].get<double>(), r["p10"].get<double>(), r["p50"].get<double>(),
                  r["p90"].get<double>(), static_cast<long long>(r["pairs"].get<int64_t>()));
    }
  }
  for (const VariantStats* s : {&stats_a, &stats_b})
    if (s->failed > 0)
      return Internal("bench-http: " + std::to_string(s->failed) + " request(s) failed, first: " + s->first_error);
  return Status::Ok();
}

}  // namespace

void RegisterBenchHttpCommand(CLI::App& app) {
  auto o = std::make_shared<BenchHttpOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-http", "paired A/B load test of OpenAI-compatible servers (streamed chat completions)");
  cmd->add_option("--url", o->url, "server A, http://HOST:PORT")->required();
  cmd->add_option("--url-b", o->url_b, "server B (default: A, with --extra-b)");
  cmd->add_option("--extra-a", o->extra_a, "JSON merged into every request of A, e.g. '{\"clover\":{\"decoder\":\"ar\"}}'");
  cmd->add_option("--extra-b", o->extra_b, "JSON merged into every request of B");
  cmd->add_option("--workload", o->workload, "JSONL of chat request bodies (bench/workloads/mixed.jsonl)")
      ->required();
  cmd->add_option("--tokenizer", o->tokenizer, "tokenizer that counts output tokens (default: the demo model's)");
  cmd->add_option("--api-key", o->api_key, "Bearer key for both servers");
  cmd->add_option("--concurrency", o->concurrency, "workers sending requests at once (default 1)");
  cmd->add_option("--repeat", o->repeat, "passes over the workload (default 1)");
  cmd->add_option("--timeout", o->timeout_s, "seconds one request may take (default 300)");
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] {
    Status s = BenchHttp(*o);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
