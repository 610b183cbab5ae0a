// `clover convert SRC -o OUT.gguf --type ...`: any model the loader reads (HF safetensors
// directory or GGUF) to a GGUF file in the canonical tensor layout, re-typed per tensor.
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/gguf_export.h"
#include "model/loader.h"

namespace clover::cli {
namespace {

struct ConvertOptions {
  std::string src;
  std::string out;
  std::string type = "f32";
  std::string arch;  // empty: the source's family
};

Status RunConvert(const ConvertOptions& opts) {
  CLOVER_ASSIGN_OR_RETURN(TypePolicy policy, TypePolicyFromName(opts.type));
  CLOVER_ASSIGN_OR_RETURN(model::ModelWeights w, model::LoadModel(opts.src));
  const std::string arch = opts.arch.empty() ? model::ModelFamilyName(w.config.family) : opts.arch;
  return WriteModelGguf(w, policy, arch, opts.type + " conversion of " + opts.src, opts.out);
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
  cmd->callback([opts] {
    Status s = RunConvert(*opts);
    SetExitCode(s.ok() ? 0 : ReportError(s));
  });
}

}  // namespace clover::cli
