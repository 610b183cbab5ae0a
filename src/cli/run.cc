// `clover run [MODEL]`: chat with a model through its chat template, one-shot (--prompt) or
// interactive (history, /reset), streaming each resolved block; Ctrl-C stops the current answer.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "cli/model_cli.h"
#include "decode/generator.h"
#include "decode/registry.h"
#include "decode/request.h"
#include "tokenizer/reasoning_parser.h"
#include "tokenizer/source_loader.h"
#include "tokenizer/utf8.h"

namespace clover::cli {
namespace {

struct RunOptions {
  std::string model;
  std::string prompt;
  std::string system;
  bool no_think = false;
  int64_t max_tokens = 1024;
  std::string decoder;  // "" = diffusion on a Clover model, else ar
  double threshold = 0.95;
  int block = 0;
  float temperature = 0.0f;
  uint64_t seed = 0;
  decode::DecodeRequest tuning;  // decoder options (AddDecoderOptions); kind and prompt unused
  int threads = 0;
};

std::atomic<bool> g_interrupted{false};

void OnSigint(int) { g_interrupted = true; }

// Prints one chat turn's output as it streams: reasoning dimmed on a terminal, content plain.
class TurnPrinter {
 public:
  explicit TurnPrinter(bool in_reasoning) : parser_(in_reasoning), tty_(isatty(1) != 0) {}
  void Feed(std::string_view text) { Print(parser_.Feed(text)); }
  void Finish() {
    Print(parser_.Finish());
    if (in_reasoning_ && tty_) std::fputs("\x1b[0m", stdout);
    std::fputs("\n", stdout);
    std::fflush(stdout);
  }
  const std::string& content() const { return content_; }

 private:
  void Print(const tokenizer::ReasoningDelta& d) {
    if (!d.reasoning.empty()) {
      if (!in_reasoning_) std::fputs(tty_ ? "\x1b[2m" : "[thinking] ", stdout);
      in_reasoning_ = true;
      std::fputs(d.reasoning.c_str(), stdout);
    }
    if (!d.content.empty()) {
      if (in_reasoning_) std::fputs(tty_ ? "\x1b[0m\n" : "\n[answer] ", stdout);
      in_reasoning_ = false;
      std::fputs(d.content.c_str(), stdout);
      content_ += d.content;
    }
    std::fflush(stdout);
  }

  tokenizer::ReasoningParser parser_;
  bool tty_;
  bool in_reasoning_ = false;
  std::string content_;
};

class ChatSession {
 public:
  ChatSession(const RunOptions& opts, std::unique_ptr<Engine> engine, tokenizer::Tokenizer tok,
              tokenizer::ChatTemplate tmpl)
      : opts_(opts),
        engine_(std::move(engine)),
        tok_(std::move(tok)),
        tmpl_(std::move(tmpl)),
        generator_(*engine_->model) {
    Reset();
  }

  void Reset() {
    messages_ = nlohmann::ordered_json::array();
    if (!opts_.system.empty()) messages_.push_back({{"role", "system"}, {"content", opts_.system}});
  }

  // Answers `user`, streaming it, and prints the stats line.
  Status Turn(const std::string& user) {
    messages_.push_back({{"role", "user"}, {"content", user}});
    nlohmann::ordered_json kwargs = {{"enable_thinking", !opts_.no_think}};
    CLOVER_ASSIGN_OR_RETURN(std::string rendered, tmpl_.Render(messages_, nullptr, true, kwargs));
    const bool thinking = tokenizer::PromptOpensReasoning(rendered);

    CLOVER_ASSIGN_OR_RETURN(decode::DecoderKind kind, decode::ParseDecoderKind(opts_.decoder));
    decode::DecodeRequest req;
    req.kind = kind;
    req.prompt = tok_.Encode(rendered);
    req.max_tokens = opts_.max_tokens;
    req.threshold = opts_.threshold;
    req.block_size = opts_.block;
    req.sampling.temperature = opts_.temperature;
    req.sampling.seed = opts_.seed;
    req.thinking = thinking;
    req.fuse_commit = opts_.tuning.fuse_commit;
    req.frontier = opts_.tuning.frontier;
    req.speculative = opts_.tuning.speculative;
    const int32_t think_end = tok_.TokenToId("</think>");
    const decode::DecodeModelInfo info = decode::DecodeModelInfoFromConfig(
        engine_->model->config(), tok_.vocab_size(),
        think_end >= 0 ? std::optional<int32_t>(think_end) : std::nullopt);
    auto token_text = [this](int32_t id) -> std::string {
      Result<std::string_view> b = tok_.TokenBytes(id, /*skip_special=*/true);
      return b.ok() ? std::string(*b) : std::string();
    };
    CLOVER_ASSIGN_OR_RETURN(std::unique_ptr<decode::Decoder> decoder,
                            decode::CreateDecoder(req, info, token_text));

    TurnPrinter printer(thinking);
    g_interrupted = false;
    std::string pending;  // bytes of an unfinished UTF-8 character at a block boundary
    CLOVER_ASSIGN_OR_RETURN(
        decode::GenerateResult r,
        generator_.Run(
            *decoder,
            [&](const decode::StepEvents& ev) {
              pending += ev.text;
              const size_t cut = tokenizer::CompleteUtf8Prefix(pending);
              printer.Feed(tokenizer::ToValidUtf8(std::string_view(pending).substr(0, cut)));
              pending.erase(0, cut);
            },
            &g_interrupted));
    printer.Feed(tokenizer::ToValidUtf8(pending));
    printer.Finish();
    messages_.push_back({{"role", "assistant"}, {"content", printer.content()}});
    const decode::DecodeCounters& c = r.counters;
    const double tps = r.seconds > 0 ? static_cast<double>(c.tokens) / r.seconds : 0.0;
    // Mean distinct routed experts per MoE layer per pass (the weight traffic of a pass).
    double experts = 0.0;
    for (int64_t e : r.distinct_experts_sum) experts += static_cast<double>(e);
    if (r.forward_calls > 0 && !r.distinct_experts_sum.empty())
      experts /= static_cast<double>(r.forward_calls * r.distinct_experts_sum.size());
    std::string other_passes;
    if (c.ar_passes > 0) other_passes += " + " + std::to_string(c.ar_passes) + " ar";
    if (c.verify_passes > 0) {
      other_passes += " + " + std::to_string(c.verify_passes) + " verify; " +
                      std::to_string(c.draft_accepted) + "/" + std::to_string(c.drafted) +
                      " drafts accepted";
    }
    std::printf(
        "[%lld tokens, %lld blocks, %lld passes (%lld preview + %lld commit%s), "
        "%.2f tokens/pass, %.1f tok/s, %.1f experts/layer/pass%s]\n",
        static_cast<long long>(c.tokens), static_cast<long long>(c.blocks),
        static_cast<long long>(c.passes()), static_cast<long long>(c.preview_passes),
        static_cast<long long>(c.commit_passes), other_passes.c_str(), c.tokens_per_pass(), tps,
        experts, r.cancelled ? ", interrupted" : "");
    return Status::Ok();
  }

 private:
  const RunOptions& opts_;
  std::unique_ptr<Engine> engine_;
  tokenizer::Tokenizer tok_;
  tokenizer::ChatTemplate tmpl_;
  decode::Generator generator_;
  nlohmann::ordered_json messages_;
};

Status RunChat(RunOptions opts) {
  if (opts.model.empty()) {
    CLOVER_ASSIGN_OR_RETURN(opts.model, DemoModelPath("run"));
  }
  if (opts.max_tokens < 1)
    return InvalidArgument("--max-tokens: " + std::to_string(opts.max_tokens) + ", expected >= 1");
  CLOVER_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, LoadEngine(opts.model, opts.threads));
  if (opts.decoder.empty()) {
    opts.decoder = engine->model->config().mask_token_id ? "diffusion" : "ar";
  }
  CLOVER_ASSIGN_OR_RETURN(tokenizer::Tokenizer tok, tokenizer::LoadTokenizer(opts.model));
  CLOVER_ASSIGN_OR_RETURN(tokenizer::ChatTemplate tmpl, tokenizer::LoadChatTemplate(opts.model));
  ChatSession session(opts, std::move(engine), std::move(tok), std::move(tmpl));
  std::signal(SIGINT, OnSigint);
  if (!opts.prompt.empty()) return session.Turn(opts.prompt);

  std::fprintf(stderr,
               "clover run: %s (%s decoder). /reset clears the history, /exit or EOF quits; "
               "Ctrl-C stops an answer.\n",
               opts.model.c_str(), opts.decoder.c_str());
  std::string line;
  while (true) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      session.Reset();
      std::fputs("(history cleared)\n", stdout);
      continue;
    }
    if (line.empty()) continue;
    CLOVER_TRY(session.Turn(line));
  }
  return Status::Ok();
}

}  // namespace

void RegisterRunCommand(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "chat with a model (interactive, or one answer with --prompt); no MODEL: the demo model");
  cmd->add_option("model", opts->model,
                  "GGUF file or model directory (default: models/clover-demo)");
  cmd->add_option("--prompt", opts->prompt, "answer this one message and exit");
  cmd->add_option("--system", opts->system, "system message");
  cmd->add_flag("--no-think", opts->no_think, "render the template with enable_thinking=false");
  cmd->add_option("--max-tokens", opts->max_tokens, "generated tokens per answer (default 1024)");
  cmd->add_option("--decoder", opts->decoder,
                  "diffusion, frontier, speculative or ar (default: diffusion when the model has a mask token, else ar)");
  cmd->add_option("--threshold", opts->threshold, "LowConfidence threshold tau (default 0.95)");
  cmd->add_option("--block", opts->block, "block size 8, 16 or 32 (default: the model's)");
  cmd->add_option("--temperature", opts->temperature, "sampling temperature (default 0 = greedy)");
  cmd->add_option("--seed", opts->seed, "sampling seed");
  AddDecoderOptions(cmd, &opts->tuning);
  AddThreadsOption(cmd, &opts->threads);
  cmd->callback([opts] {
    Status s = RunChat(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
