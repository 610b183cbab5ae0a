// The OpenAI-compatible HTTP server (docs/server.md): routes, auth, limits, request logging, and
// the chat/completions handlers that turn requests into scheduler jobs and stream their output.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "server/metrics.h"
#include "server/scheduler.h"
#include "server/served_model.h"

namespace httplib {
class Server;
}

namespace clover::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 = any free port
  std::string api_key;  // "" = no auth
  int parallel = 4;     // generation slots
  int queue = 64;       // requests waiting beyond the slots
  int64_t max_body_bytes = 8 << 20;
  int shutdown_grace_ms = 5000;  // in-flight requests may finish within this after SIGTERM
};

class HttpServer {
 public:
  explicit HttpServer(ServerOptions options);
  ~HttpServer();

  // Binds the listening socket; returns the port (the chosen one for port 0).
  Result<int> Bind();
  // Serves until Stop(); call from its own thread after Bind(). Before SetModel(), /health and
  // the API answer 503.
  void Listen();
  // Makes the server ready: starts the scheduler over `model`.
  void SetModel(std::unique_ptr<ServedModel> model);
  // Stops taking requests, lets in-flight ones finish within the grace period, cancels the rest,
  // and ends Listen().
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clover::server
