// `clover eval [MODEL]`: exact-match accuracy and speed of every decoder configuration on a suite
// of checkable chat tasks (default: the demo model and its held-out eval_tasks.jsonl).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/model_cli.h"
#include "core/progress.h"
#include "decode/generator.h"
#include "decode/registry.h"
#include "decode/request.h"
#include "tokenizer/reasoning_parser.h"
#include "tokenizer/source_loader.h"

namespace clover::cli {
namespace {

struct EvalOptions {
  std::string model;
  std::string suite;
  std::string decoders;  // "" = ar, plus diffusion when the model has a mask token
  std::string thresholds = "0.95,0.8";
  std::string blocks = "8,16,32";
  int64_t limit = 0;
  int threads = 0;
  int64_t max_tokens = 128;      // evaluate.py's max_new
  decode::DecodeRequest tuning;  // decoder options (AddDecoderOptions); kind and prompt unused
  bool json = false;
  std::string failures;  // JSONL file for every wrong answer, "" = none
};

// One line of the suite (tools/train/data.py eval_record).
struct EvalTask {
  std::string task;
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;  // OpenAI tool list offered to the model, null when none
  bool enable_thinking = false;
  std::string answer;
  std::optional<std::string> prompt;  // the trainer's rendering, checked against ours
  std::string where;                  // file:line, for errors
};

struct DecoderConfig {
  decode::DecoderKind kind = decode::DecoderKind::kAr;
  double threshold = 0.0;
  int block = 0;
};

struct Tally {
  int64_t n = 0;
  int64_t correct = 0;
  int64_t tokens = 0;
  int64_t passes = 0;
  int64_t forwards = 0;  // Model::Forward calls after the prefill (fewer than passes when fused)
  int64_t drafted = 0;   // speculative: draft tokens proposed / accepted
  int64_t accepted = 0;
  double seconds = 0.0;

  void Add(const Tally& t) {
    n += t.n;
    drafted += t.drafted;
    accepted += t.accepted;
    correct += t.correct;
    tokens += t.tokens;
    passes += t.passes;
    forwards += t.forwards;
    seconds += t.seconds;
  }
  double accuracy() const { return n == 0 ? 0.0 : static_cast<double>(correct) / n; }
  double tokens_per_pass() const {
    return passes == 0 ? 0.0 : static_cast<double>(tokens) / static_cast<double>(passes);
  }
  double passes_per_answer() const {
    return n == 0 ? 0.0 : static_cast<double>(passes) / static_cast<double>(n);
  }
  double forwards_per_answer() const {
    return n == 0 ? 0.0 : static_cast<double>(forwards) / static_cast<double>(n);
  }
  double tok_s() const { return seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0; }
};

// One task's tally and the final answer it produced.
struct TaskOutcome {
  Tally tally;
  std::string answer;
};

struct ConfigResult {
  DecoderConfig config;
  Tally total;
  std::map<std::string, Tally> by_task;
};

Result<std::string> StringField(const nlohmann::json& row, const char* key,
                                const std::string& where) {
  auto it = row.find(key);
  if (it == row.end() || !it->is_string())
    return InvalidArgument(where + ": field \"" + key + "\" missing or not a string");
  return it->get<std::string>();
}

// Reads the JSONL suite; every malformed line is an error naming file:line and the field.
Result<std::vector<EvalTask>> LoadSuite(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("eval: cannot open suite " + path);
  std::vector<EvalTask> tasks;
  std::string line;
  for (int64_t line_no = 1; std::getline(in, line); ++line_no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    EvalTask t;
    t.where = path + ":" + std::to_string(line_no);
    const nlohmann::json row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (row.is_discarded() || !row.is_object())
      return InvalidArgument(t.where + ": not a JSON object");
    CLOVER_ASSIGN_OR_RETURN(t.task, StringField(row, "task", t.where));
    CLOVER_ASSIGN_OR_RETURN(t.answer, StringField(row, "answer", t.where));
    auto msgs = row.find("messages");
    if (msgs == row.end() || !msgs->is_array() || msgs->empty())
      return InvalidArgument(t.where + ": field \"messages\" missing or not a non-empty array");
    for (const nlohmann::json& m : *msgs) {
      if (!m.is_object() || !m.contains("role") || !m.contains("content"))
        return InvalidArgument(t.where + ": a message without \"role\" and \"content\"");
    }
    t.messages = nlohmann::ordered_json::parse(msgs->dump());
    auto tools = row.find("tools");
    if (tools != row.end() && !tools->is_null()) {
      if (!tools->is_array()) return InvalidArgument(t.where + ": field \"tools\" is not an array");
      t.tools = nlohmann::ordered_json::parse(tools->dump());
    }
    auto think = row.find("enable_thinking");
    if (think != row.end()) {
      if (!think->is_boolean())
        return InvalidArgument(t.where + ": field \"enable_thinking\" is not a boolean");
      t.enable_thinking = think->get<bool>();
    }
    if (row.contains("prompt")) {
      CLOVER_ASSIGN_OR_RETURN(std::string p, StringField(row, "prompt", t.where));
      t.prompt = std::move(p);
    }
    tasks.push_back(std::move(t));
  }
  if (tasks.empty()) return InvalidArgument("eval: suite " + path + " holds no tasks");
  return tasks;
}

// The final answer as evaluate.py takes it: the text after the last </think>, stripped.
std::string FinalAnswer(const std::string& text) {
  const size_t close = text.rfind("</think>");
  std::string s = close == std::string::npos ? text : text.substr(close + 8);
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

Result<std::vector<DecoderConfig>> ParseConfigs(const EvalOptions& opts, bool has_mask) {
  std::vector<std::string> names;
  const std::string list = opts.decoders.empty()
                               ? (has_mask ? "ar,diffusion,frontier,speculative" : "ar")
                               : opts.decoders;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    names.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  std::vector<double> taus;
  for (size_t at = 0; at <= opts.thresholds.size();) {
    const size_t comma = std::min(opts.thresholds.find(',', at), opts.thresholds.size());
    const std::string item = opts.thresholds.substr(at, comma - at);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !(v >= 0.0 && v <= 1.0))
      return InvalidArgument("--thresholds: '" + item + "', expected numbers in [0, 1]");
    taus.push_back(v);
    at = comma + 1;
  }
  CLOVER_ASSIGN_OR_RETURN(std::vector<int64_t> blocks, ParseIntList(opts.blocks, "--blocks"));
  std::vector<DecoderConfig> out;
  for (const std::string& name : names) {
    Result<decode::DecoderKind> parsed = decode::ParseDecoderKind(name);
    if (!parsed.ok()) return InvalidArgument("--decoders: " + parsed.status().message());
    const decode::DecoderKind kind = *parsed;
    if (!decode::IsBlockDecoder(kind)) {  // no threshold or block axis
      out.push_back({kind, 0.0, 0});
      continue;
    }
    for (double tau : taus) {
      for (int64_t b : blocks) out.push_back({kind, tau, static_cast<int>(b)});
    }
  }
  return out;
}

class SuiteRunner {
 public:
  SuiteRunner(std::unique_ptr<Engine> engine, tokenizer::Tokenizer tok, int64_t max_tokens,
              const decode::DecodeRequest& tuning)
      : engine_(std::move(engine)),
        tok_(std::move(tok)),
        generator_(*engine_->model),
        max_tokens_(max_tokens),
        tuning_(tuning) {
    const int32_t think_end = tok_.TokenToId("</think>");
    info_ = decode::DecodeModelInfoFromConfig(
        engine_->model->config(), tok_.vocab_size(),
        think_end >= 0 ? std::optional<int32_t>(think_end) : std::nullopt);
  }

  const decode::DecodeModelInfo& info() const { return info_; }

  // Runs one task greedily; returns its tally (n = 1, correct 0 or 1) and final answer.
  Result<TaskOutcome> RunTask(const DecoderConfig& config, const std::vector<int32_t>& prompt,
                              bool thinking, const std::string& answer) {
    decode::DecodeRequest req = tuning_;
    req.kind = config.kind;
    req.prompt = prompt;
    req.max_tokens = max_tokens_;
    req.threshold = config.threshold;
    req.block_size = config.block;
    req.thinking = thinking;
    // Plain greedy, as tools/train/evaluate.py decodes: no presence/repetition penalty.
    req.penalties.presence = 0.0f;
    req.penalties.frequency = 0.0f;
    req.penalties.repetition = 1.0f;
    auto token_text = [this](int32_t id) -> std::string {
      Result<std::string_view> b = tok_.TokenBytes(id, /*skip_special=*/true);
      return b.ok() ? std::string(*b) : std::string();
    };
    CLOVER_ASSIGN_OR_RETURN(std::unique_ptr<decode::Decoder> decoder,
                            decode::CreateDecoder(req, info_, token_text));
    CLOVER_ASSIGN_OR_RETURN(decode::GenerateResult r, generator_.Run(*decoder));
    // Specials (EOS, im_end) are dropped; </think> is an ordinary added token and stays.
    CLOVER_ASSIGN_OR_RETURN(std::string text, tok_.Decode(r.tokens, /*skip_special=*/true));
    TaskOutcome outcome;
    outcome.answer = FinalAnswer(text);
    Tally& t = outcome.tally;
    t.n = 1;
    t.correct = outcome.answer == answer ? 1 : 0;
    t.tokens = r.counters.tokens;
    t.passes = r.counters.passes();
    t.forwards = r.forward_calls;
    t.drafted = r.counters.drafted;
    t.accepted = r.counters.draft_accepted;
    t.seconds = r.seconds;
    return outcome;
  }

  const tokenizer::Tokenizer& tokenizer() const { return tok_; }

 private:
  std::unique_ptr<Engine> engine_;
  tokenizer::Tokenizer tok_;
  decode::Generator generator_;
  int64_t max_tokens_;
  decode::DecodeRequest tuning_;
  decode::DecodeModelInfo info_;
};

// {decoder, threshold, block}: null threshold and block for the decoders without those axes.
nlohmann::ordered_json ConfigJson(const DecoderConfig& config) {
  const bool ar = !decode::IsBlockDecoder(config.kind);
  nlohmann::ordered_json row;
  row["decoder"] = decode::DecoderKindName(config.kind);
  row["threshold"] =
      ar ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(config.threshold);
  row["block"] = ar ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(config.block);
  return row;
}

nlohmann::ordered_json RowJson(const ConfigResult& r) {
  nlohmann::ordered_json row = ConfigJson(r.config);
  row["accuracy"] = r.total.accuracy();
  row["tokens_per_pass"] = r.total.tokens_per_pass();
  row["passes"] = r.total.passes_per_answer();
  row["forwards"] = r.total.forwards_per_answer();
  row["tok_s"] = r.total.tok_s();
  row["draft_acceptance"] =
      r.config.kind == decode::DecoderKind::kSpeculative && r.total.drafted > 0
          ? nlohmann::ordered_json(static_cast<double>(r.total.accepted) / r.total.drafted)
          : nlohmann::ordered_json(nullptr);
  row["n"] = r.total.n;
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  for (const auto& [task, t] : r.by_task) {
    by[task] = {{"accuracy", t.accuracy()}, {"n", t.n}, {"tokens_per_pass", t.tokens_per_pass()}};
  }
  row["by_task"] = by;
  return row;
}

void PrintTable(const std::vector<ConfigResult>& results) {
  std::printf("%-11s %5s %5s %9s %11s %13s %15s %8s %9s\n", "decoder", "tau", "block", "accuracy",
              "tokens/pass", "passes/answer", "forwards/answer", "tok/s", "accepted");
  for (const ConfigResult& r : results) {
    const bool ar = !decode::IsBlockDecoder(r.config.kind);  // no tau or block axis
    const std::string accepted =
        r.total.drafted > 0
            ? std::to_string(static_cast<int>(100.0 * r.total.accepted / r.total.drafted + 0.5)) +
                  "%"
            : "-";
    std::printf("%-11s %5s %5s %8.1f%% %11.2f %13.1f %15.1f %8.1f %9s\n",
                decode::DecoderKindName(r.config.kind),
                ar ? "-" : std::to_string(r.config.threshold).substr(0, 4).c_str(),
                ar ? "-" : std::to_string(r.config.block).c_str(), 100.0 * r.total.accuracy(),
                r.total.tokens_per_pass(), r.total.passes_per_answer(),
                r.total.forwards_per_answer(), r.total.tok_s(), accepted.c_str());
  }
  if (results.empty()) return;
  std::printf("\naccuracy by task (%%; tokens/pass in parentheses)\n%-10s", "task");
  for (const ConfigResult& r : results) {
    const bool ar = !decode::IsBlockDecoder(r.config.kind);
    const std::string head =
        ar ? std::string(decode::DecoderKindName(r.config.kind))
           : std::to_string(r.config.threshold).substr(0, 4) + "/" + std::to_string(r.config.block);
    std::printf(" %13s", head.c_str());
  }
  std::printf("\n");
  for (const auto& [task, first] : results.front().by_task) {
    std::printf("%-10s", task.c_str());
    for (const ConfigResult& r : results) {
      const Tally& t = r.by_task.at(task);
      char cell[32];
      std::snprintf(cell, sizeof cell, "%.0f (%.2f)", 100.0 * t.accuracy(), t.tokens_per_pass());
      std::printf(" %13s", cell);
    }
    std::printf("  n=%lld\n", static_cast<long long>(first.n));
  }
}

Status RunEval(EvalOptions opts) {
  if (opts.model.empty()) {
    CLOVER_ASSIGN_OR_RETURN(opts.model, DemoModelPath("eval"));
  }
  if (opts.suite.empty()) {
    const std::filesystem::path dir(opts.model);
    if (!std::filesystem::is_directory(dir))
      return InvalidArgument("eval: --suite is required when MODEL (" + opts.model +
                             ") is not a model directory holding eval_tasks.jsonl");
    opts.suite = (dir / "eval_tasks.jsonl").string();
  }
  if (opts.max_tokens < 1)
    return InvalidArgument("--max-tokens: " + std::to_string(opts.max_tokens) + ", expected >= 1");
  if (opts.limit < 0)
    return InvalidArgument("--limit: " + std::to_string(opts.limit) + ", expected >= 0 (0 = all)");
  CLOVER_ASSIGN_OR_RETURN(std::vector<EvalTask> tasks, LoadSuite(opts.suite));
  if (opts.limit > 0 && static_cast<size_t>(opts.limit) < tasks.size())
    tasks.resize(static_cast<size_t>(opts.limit));

  CLOVER_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, LoadEngine(opts.model, opts.threads));
  const bool has_mask = engine->model->config().mask_token_id.has_value();
  CLOVER_ASSIGN_OR_RETURN(std::vector<DecoderConfig> configs, ParseConfigs(opts, has_mask));
  CLOVER_ASSIGN_OR_RETURN(tokenizer::Tokenizer tok, tokenizer::LoadTokenizer(opts.model));
  CLOVER_ASSIGN_OR_RETURN(tokenizer::ChatTemplate tmpl, tokenizer::LoadChatTemplate(opts.model));

  // Render every task once; the trainer's own rendering must agree with the engine's template.
  std::vector<std::vector<int32_t>> prompts;
  std::vector<bool> thinking;
  for (const EvalTask& t : tasks) {
    const nlohmann::ordered_json kwargs = {{"enable_thinking", t.enable_thinking}};
    CLOVER_ASSIGN_OR_RETURN(std::string rendered, tmpl.Render(t.messages, t.tools, true, kwargs));
    if (t.prompt && *t.prompt != rendered) {
      return InvalidArgument(t.where + ": the chat template renders " +
                             nlohmann::json(rendered).dump() + " but the task's \"prompt\" is " +
                             nlohmann::json(*t.prompt).dump());
    }
    thinking.push_back(tokenizer::PromptOpensReasoning(rendered));
    prompts.push_back(tok.Encode(rendered));
  }

  std::ofstream failures;
  if (!opts.failures.empty()) {
    failures.open(opts.failures, std::ios::trunc);
    if (!failures) return InvalidArgument("--failures: cannot write " + opts.failures);
  }
  SuiteRunner runner(std::move(engine), std::move(tok), opts.max_tokens, opts.tuning);
  std::vector<ConfigResult> results;
  Progress progress("eval", configs.size() * tasks.size());
  uint64_t done = 0;
  for (const DecoderConfig& config : configs) {
    ConfigResult res;
    res.config = config;
    for (size_t i = 0; i < tasks.size(); ++i) {
      CLOVER_ASSIGN_OR_RETURN(TaskOutcome outcome,
                              runner.RunTask(config, prompts[i], thinking[i], tasks[i].answer));
      res.total.Add(outcome.tally);
      res.by_task[tasks[i].task].Add(outcome.tally);
      if (failures.is_open() && outcome.tally.correct == 0) {
        nlohmann::ordered_json row = ConfigJson(config);
        row["task"] = tasks[i].task;
        row["where"] = tasks[i].where;
        row["enable_thinking"] = tasks[i].enable_thinking;
        row["expected"] = tasks[i].answer;
        row["got"] = outcome.answer;
        failures << row.dump() << "\n";
      }
      progress.Update(++done);
    }
    results.push_back(std::move(res));
  }
  progress.Finish();
  if (failures.is_open() && !failures.flush())
    return InvalidArgument("--failures: writing " + opts.failures + " failed");

  if (opts.json) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const ConfigResult& r : results) rows.push_back(RowJson(r));
    std::printf("%s\n", rows.dump(1).c_str());
  } else {
    std::printf("%s: %zu tasks from %s, greedy, max %lld tokens\n\n", opts.model.c_str(),
                tasks.size(), opts.suite.c_str(), static_cast<long long>(opts.max_tokens));
    PrintTable(results);
  }
  return Status::Ok();
}

}  // namespace

void RegisterEvalCommand(CLI::App& app) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "exact-match accuracy and speed of each decoder on a task suite (default: demo model)");
  cmd->add_option("model", opts->model,
                  "GGUF file or model directory (default: models/clover-demo)");
  cmd->add_option("--suite", opts->suite,
                  "JSONL tasks {task, messages, enable_thinking, answer[, prompt]} "
                  "(default: MODEL/eval_tasks.jsonl)");
  cmd->add_option("--decoders", opts->decoders,
                  "comma list of ar, diffusion (default: ar,diffusion; ar without a mask token)");
  cmd->add_option("--thresholds", opts->thresholds, "diffusion taus (default 0.95,0.8)");
  cmd->add_option("--blocks", opts->blocks, "diffusion block sizes (default 8,16,32)");
  cmd->add_option("--limit", opts->limit, "first N tasks only (default: all)");
  cmd->add_option("--max-tokens", opts->max_tokens, "generated tokens per answer (default 128)");
  AddDecoderOptions(cmd, &opts->tuning);
  cmd->add_flag("--json", opts->json, "print the rows as JSON");
  cmd->add_option("--failures", opts->failures,
                  "write every wrong answer to this JSONL file: decoder, threshold, block, task, "
                  "where (suite file:line), enable_thinking, expected, got");
  AddThreadsOption(cmd, &opts->threads);
  cmd->callback([opts] {
    Status s = RunEval(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
