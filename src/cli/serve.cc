// `clover serve [MODEL]`: the OpenAI-compatible HTTP server (docs/server.md). The socket is bound
// first so that /health answers 503 while the model loads; SIGTERM/SIGINT drain and exit 0.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli/command.h"
#include "cli/model_cli.h"
#include "server/http_server.h"

namespace clover::cli {
namespace {

struct ServeOptions {
  std::string model;
  std::string alias;
  int64_t ctx = 0;  // 0 = the model's max_position_embeddings
  int threads = 0;
  server::ServerOptions server;
};

int Serve(ServeOptions o) {
  if (o.model.empty()) {
    Result<std::string> demo = DemoModelPath("serve");
    if (!demo.ok()) return ReportError(demo.status());
    o.model = *demo;
  }
  if (o.server.api_key.empty())
    if (const char* key = std::getenv("CLOVER_API_KEY")) o.server.api_key = key;
  if (o.server.parallel < 1 || o.server.queue < 0 || o.server.max_body_bytes < 1)
    return ReportError(InvalidArgument("serve: --parallel must be >= 1, --queue >= 0, --max-body >= 1"));

  // Signals go to a waiting thread only: every thread started below inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  server::HttpServer http(o.server);
  Result<int> port = http.Bind();
  if (!port.ok()) return ReportError(port.status());
  std::thread listener([&http] { http.Listen(); });

  std::fprintf(stderr, "clover serve: loading %s\n", o.model.c_str());
  Result<std::unique_ptr<Engine>> engine = LoadEngine(o.model, o.threads);
  Result<std::unique_ptr<server::ServedModel>> served =
      engine.ok() ? server::LoadServedModel(*(*engine)->model, (*engine)->weights, o.model, o.alias, o.ctx)
                  : Result<std::unique_ptr<server::ServedModel>>(engine.status());
  if (!served.ok()) {
    http.Stop();
    listener.join();
    return ReportError(served.status());
  }
  const std::string alias = (*served)->alias;
  http.SetModel(std::move(*served));
  std::printf("clover serve: listening on http://%s:%d\n", o.server.host.c_str(), *port);
  std::fflush(stdout);
  std::fprintf(stderr, "clover serve: model '%s', %d slots, queue %d%s\n", alias.c_str(),
               o.server.parallel, o.server.queue, o.server.api_key.empty() ? "" : ", API key required");

  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "clover serve: %s, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  http.Stop();
  listener.join();
  return 0;
}

}  // namespace

void RegisterServeCommand(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "OpenAI-compatible HTTP server with a dashboard at / (no MODEL: the demo model)");
  cmd->add_option("model", o->model, "GGUF file or model directory (default: models/clover-demo)");
  cmd->add_option("--host", o->server.host, "address to bind (default 127.0.0.1: loopback only)");
  cmd->add_option("--port", o->server.port, "port (default 8080; 0 = any free port)");
  cmd->add_option("--api-key", o->server.api_key,
                  "require 'Authorization: Bearer KEY' on /v1 (default: env CLOVER_API_KEY)");
  cmd->add_option("--parallel", o->server.parallel, "generation slots batched together (default 4)");
  cmd->add_option("--queue", o->server.queue, "requests that may wait for a slot (default 64)");
  cmd->add_option("--ctx", o->ctx, "context per request, tokens (default: the model's maximum)");
  cmd->add_option("--model-alias", o->alias, "model id in the API (default: the model's folder name)");
  cmd->add_option("--max-body", o->server.max_body_bytes, "request body limit, bytes (default 8 MiB)");
  cmd->add_option("--shutdown-grace", o->server.shutdown_grace_ms,
                  "ms in-flight requests may run after SIGTERM before they are cancelled (default 5000)");
  AddThreadsOption(cmd, &o->threads);
  cmd->callback([o] { SetExitCode(Serve(*o)); });
}

}  // namespace clover::cli
