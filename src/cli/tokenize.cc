// `clover tokenize`, `clover detokenize`, `clover template`: the tokenizer and chat template
// from a tokenizer.json, a model directory or a GGUF.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "tokenizer/source_loader.h"

namespace clover::cli {
namespace {

using ojson = nlohmann::ordered_json;

struct TokenizeOptions {
  std::string src, text, file, jsonl;
  bool json = false;
  bool verbose = false;
  bool no_parse_special = false;
};

struct DetokenizeOptions {
  std::string src, ids;
  bool skip_special = false;
  bool json = false;
};

struct TemplateOptions {
  std::string src, messages, tools, kwargs;
  bool no_think = false;
  bool no_generation_prompt = false;
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<ojson> ReadJsonFile(const std::string& path) {
  CLOVER_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  ojson j = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(path + ": not valid JSON");
  return j;
}

Status PrintIds(const tokenizer::Tokenizer& tok, const std::vector<int32_t>& ids, bool json, bool verbose) {
  if (json) {
    ojson out = {{"ids", ids}, {"count", ids.size()}};
    if (verbose) {
      ojson tokens = ojson::array();
      for (int32_t id : ids) tokens.push_back(tok.IdToToken(id));
      out["tokens"] = tokens;
    }
    std::printf("%s\n", out.dump(-1, ' ', false, ojson::error_handler_t::replace).c_str());
    return Status::Ok();
  }
  if (verbose) {
    for (int32_t id : ids) {
      CLOVER_ASSIGN_OR_RETURN(std::string_view bytes, tok.TokenBytes(id));
      std::printf("%d\t%s\n", id, ojson(std::string(bytes)).dump(-1, ' ', false, ojson::error_handler_t::replace).c_str());
    }
    std::printf("%zu tokens\n", ids.size());
    return Status::Ok();
  }
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
  std::printf("%s\n", line.c_str());
  return Status::Ok();
}

Status RunTokenize(const TokenizeOptions& o) {
  const int inputs = !o.text.empty() + !o.file.empty() + !o.jsonl.empty();
  if (inputs != 1) return InvalidArgument("tokenize: give exactly one of --text, --file, --jsonl");
  CLOVER_ASSIGN_OR_RETURN(tokenizer::Tokenizer tok, tokenizer::LoadTokenizer(o.src));
  const tokenizer::EncodeOptions enc{.parse_special = !o.no_parse_special};
  if (!o.jsonl.empty()) {
    std::ifstream in(o.jsonl);
    if (!in) return NotFound(o.jsonl + ": cannot open");
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const ojson j = ojson::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string()) {
        return InvalidArgument(o.jsonl + ":" + std::to_string(n) + ": expected a JSON object with a string \"text\"");
      }
      std::printf("%s\n", ojson({{"ids", tok.Encode(j["text"].get<std::string>(), enc)}}).dump().c_str());
    }
    return Status::Ok();
  }
  std::string text = o.text;
  if (!o.file.empty()) {
    CLOVER_ASSIGN_OR_RETURN(text, ReadFile(o.file));
  }
  return PrintIds(tok, tok.Encode(text, enc), o.json, o.verbose);
}

Status RunDetokenize(const DetokenizeOptions& o) {
  std::vector<int32_t> ids;
  std::string number;
  for (size_t i = 0; i <= o.ids.size(); ++i) {
    const char c = i < o.ids.size() ? o.ids[i] : ',';
    if (c == ',' || c == ' ' || c == '[' || c == ']') {
      if (number.empty()) continue;
      char* end = nullptr;
      const long v = std::strtol(number.c_str(), &end, 10);
      if (*end != '\0' || v < 0 || v > INT32_MAX) return InvalidArgument("--ids: \"" + number + "\" is not a token id");
      ids.push_back(static_cast<int32_t>(v));
      number.clear();
    } else {
      number += c;
    }
  }
  CLOVER_ASSIGN_OR_RETURN(tokenizer::Tokenizer tok, tokenizer::LoadTokenizer(o.src));
  CLOVER_ASSIGN_OR_RETURN(std::string text, tok.Decode(ids, o.skip_special));
  if (o.json) {
    std::printf("%s\n", ojson({{"text", text}}).dump().c_str());
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::printf("\n");
  }
  return Status::Ok();
}

Status RunTemplate(const TemplateOptions& o) {
  CLOVER_ASSIGN_OR_RETURN(tokenizer::ChatTemplate tpl, tokenizer::LoadChatTemplate(o.src));
  CLOVER_ASSIGN_OR_RETURN(ojson messages, ReadJsonFile(o.messages));
  ojson tools = nullptr;
  if (!o.tools.empty()) {
    CLOVER_ASSIGN_OR_RETURN(tools, ReadJsonFile(o.tools));
  }
  ojson kwargs = ojson::object();
  if (!o.kwargs.empty()) {
    kwargs = ojson::parse(o.kwargs, nullptr, /*allow_exceptions=*/false);
    if (kwargs.is_discarded() || !kwargs.is_object()) return InvalidArgument("--kwargs: expected a JSON object");
  }
  if (o.no_think) kwargs["enable_thinking"] = false;
  CLOVER_ASSIGN_OR_RETURN(std::string prompt, tpl.Render(messages, tools, !o.no_generation_prompt, kwargs));
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  return Status::Ok();
}

int Finish(const Status& s) { return s.ok() ? 0 : ReportError(s); }

}  // namespace

void RegisterTokenizeCommands(CLI::App& app) {
  auto t = std::make_shared<TokenizeOptions>();
  CLI::App* tok = app.add_subcommand("tokenize", "Encode text to token ids");
  tok->add_option("src", t->src, "tokenizer.json, model directory or GGUF")->required();
  tok->add_option("--text", t->text, "text to encode");
  tok->add_option("--file", t->file, "file whose contents to encode");
  tok->add_option("--jsonl", t->jsonl, "JSONL file: encode each line's \"text\", print {\"ids\": [...]} per line");
  tok->add_flag("--json", t->json, "print JSON");
  tok->add_flag("--verbose", t->verbose, "print each token's text");
  tok->add_flag("--no-parse-special", t->no_parse_special, "treat special-token text as plain text");
  tok->callback([t] { SetExitCode(Finish(RunTokenize(*t))); });

  auto d = std::make_shared<DetokenizeOptions>();
  CLI::App* detok = app.add_subcommand("detokenize", "Decode token ids to text");
  detok->add_option("src", d->src, "tokenizer.json, model directory or GGUF")->required();
  detok->add_option("--ids", d->ids, "ids separated by commas or spaces")->required();
  detok->add_flag("--skip-special", d->skip_special, "leave out special tokens");
  detok->add_flag("--json", d->json, "print JSON");
  detok->callback([d] { SetExitCode(Finish(RunDetokenize(*d))); });

  auto m = std::make_shared<TemplateOptions>();
  CLI::App* tpl = app.add_subcommand("template", "Render a conversation with the model's chat template");
  tpl->add_option("src", m->src, "model directory, tokenizer_config.json, .jinja or GGUF")->required();
  tpl->add_option("--messages", m->messages, "JSON file with the messages array")->required();
  tpl->add_option("--tools", m->tools, "JSON file with the tools array");
  tpl->add_option("--kwargs", m->kwargs, "extra template variables as a JSON object");
  tpl->add_flag("--no-think", m->no_think, "set enable_thinking=false");
  tpl->add_flag("--no-generation-prompt", m->no_generation_prompt, "do not open the assistant turn");
  tpl->callback([m] { SetExitCode(Finish(RunTemplate(*m))); });
}

}  // namespace clover::cli
