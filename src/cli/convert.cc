// `clover convert SRC -o OUT.gguf --type ...`: any model the loader reads (HF safetensors
// directory or GGUF) to a GGUF file in the canonical tensor layout, re-typed per tensor, with the
// source's tokenizer.
#include <filesystem>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/gguf_export.h"
#include "io/gguf.h"
#include "model/loader.h"
#include "tokenizer/gguf_tokenizer_writer.h"

namespace clover::cli {
namespace {

struct ConvertOptions {
  std::string src;
  std::string out;
  std::string type = "f32";
  std::string arch;  // empty: the source's family
  bool no_tokenizer = false;
};

// The tokenizer metadata of `src`: a GGUF's `tokenizer.*` keys as they are; for HF safetensors,
// the tokenizer.json beside them converted (none when there is no tokenizer.json).
Result<tokenizer::GgufKvList> SourceTokenizerKv(const std::string& src, int64_t n_vocab) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(src, ec) && fs::path(src).extension() == ".gguf") {
    CLOVER_ASSIGN_OR_RETURN(std::shared_ptr<io::GgufFile> gguf, io::GgufFile::Open(src));
    return tokenizer::GgufTokenizerKvOf(*gguf);
  }
  const fs::path dir = fs::is_directory(src, ec) ? fs::path(src) : fs::path(src).parent_path();
  if (!fs::exists(dir / "tokenizer.json", ec)) return tokenizer::GgufKvList{};
  Result<tokenizer::GgufKvList> kv = tokenizer::GgufTokenizerKvFromHfDir(dir.string(), n_vocab);
  if (!kv.ok()) {
    return Status(kv.status().code(),
                  kv.status().message() + " (--no-tokenizer converts without the tokenizer)");
  }
  return kv;
}

Status RunConvert(const ConvertOptions& opts) {
  CLOVER_ASSIGN_OR_RETURN(TypePolicy policy, TypePolicyFromName(opts.type));
  CLOVER_ASSIGN_OR_RETURN(model::ModelWeights w, model::LoadModel(opts.src));
  const std::string arch = opts.arch.empty() ? model::ModelFamilyName(w.config.family) : opts.arch;
  tokenizer::GgufKvList tokenizer_kv;
  if (!opts.no_tokenizer) {
    CLOVER_ASSIGN_OR_RETURN(tokenizer_kv, SourceTokenizerKv(opts.src, w.config.vocab_size));
  }
  return WriteModelGguf(w, policy, arch, opts.type + " conversion of " + opts.src, opts.out,
                        tokenizer_kv);
}

}  // namespace

void RegisterConvertCommand(CLI::App& app) {
  auto opts = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert a model (HF safetensors or GGUF) to GGUF, re-typing its tensors");
  cmd->add_option("src", opts->src, "model directory or file")->required();
  cmd->add_option("-o,--out", opts->out, "output GGUF path")->required();
  cmd->add_option("--type", opts->type, kTypePolicyHelp)->capture_default_str();
  cmd->add_option("--arch", opts->arch, "qwen35moe | clover_moe (default: the source's)");
  cmd->add_flag("--no-tokenizer", opts->no_tokenizer,
                "write no tokenizer metadata (for a tokenizer.json the GGUF layout cannot hold)");
  cmd->callback([opts] {
    Status s = RunConvert(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
