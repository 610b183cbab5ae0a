// Entry point of the `clover` executable: builds the command table and runs one command.
#include <cstdio>

#include "cli/command.h"

namespace clover::cli {
namespace {
int g_exit_code = 0;
}  // namespace

int ReportError(const Status& status) {
  std::fprintf(stderr, "clover: error: %s\n", status.message().c_str());
  const int code = status.code() == StatusCode::kInvalidArgument ? 2 : 1;
  SetExitCode(code);
  return code;
}

void SetExitCode(int code) { g_exit_code = code; }
int ExitCode() { return g_exit_code; }

}  // namespace clover::cli

int main(int argc, char** argv) {
  CLI::App app{"clover: inference engine for Clover block-diffusion and Qwen3.5/3.6 MoE models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "clover 0.1.0");
  clover::cli::RegisterInfoCommand(app);
  clover::cli::RegisterVerifyCommand(app);
  clover::cli::RegisterLogitsCommand(app);
  clover::cli::RegisterGenerateCommand(app);
  clover::cli::RegisterBenchCommand(app);
  clover::cli::RegisterTokenizeCommands(app);
  clover::cli::RegisterRunCommand(app);
  clover::cli::RegisterEvalCommand(app);
  clover::cli::RegisterServeCommand(app);
  clover::cli::RegisterBenchHttpCommand(app);
  clover::cli::RegisterConvertCommand(app);
  clover::cli::RegisterSynthCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return clover::cli::ExitCode();
}
