// The `clover` command registry: one Register*Command per file, listed in main.cc.
#pragma once

#include <CLI/CLI.hpp>

#include "core/status.h"

namespace clover::cli {

// Each command adds a subcommand to `app` whose callback sets the process exit code through
// `SetExitCode`; errors go through `ReportError` (one line on stderr, non-zero exit).
void RegisterInfoCommand(CLI::App& app);
void RegisterVerifyCommand(CLI::App& app);
void RegisterLogitsCommand(CLI::App& app);
void RegisterGenerateCommand(CLI::App& app);
void RegisterBenchCommand(CLI::App& app);
void RegisterTokenizeCommands(CLI::App& app);  // tokenize, detokenize, template
void RegisterRunCommand(CLI::App& app);
void RegisterEvalCommand(CLI::App& app);
void RegisterServeCommand(CLI::App& app);
void RegisterBenchHttpCommand(CLI::App& app);
void RegisterConvertCommand(CLI::App& app);
void RegisterSynthCommand(CLI::App& app);

// Prints "clover: error: <message>" and returns the exit code for `status` (never 0).
int ReportError(const Status& status);
// Records the exit code main() returns.
void SetExitCode(int code);
int ExitCode();

}  // namespace clover::cli
