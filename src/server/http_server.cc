#include "server/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "server/dashboard.h"
#include "server/generation.h"
#include "server/peer_socket.h"

namespace clover::server {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// How often an idle stream is probed with an SSE comment: a write to a closed connection fails
// on the next probe, which is how a client that went away is noticed between passes.
constexpr auto kStreamProbeInterval = std::chrono::milliseconds(100);

void SendJson(httplib::Response& res, int status, const ojson& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void SendError(httplib::Response& res, const ApiError& e) { SendJson(res, e.status, e.ToJson()); }

ApiError ServerError(int status, std::string message, std::string code) {
  ApiError e;
  e.status = status;
  e.type = "server_error";
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

std::string MetricsEndpoint(const std::string& path) {
  for (const char* known : {"/v1/chat/completions", "/v1/completions", "/v1/models", "/health",
                            "/metrics", "/"})
    if (path == known) return path;
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  return "other";
}

thread_local Clock::time_point t_request_start;

}  // namespace

class HttpServer::Impl {
 public:
  explicit Impl(ServerOptions options) : options_(std::move(options)), metrics_(options_.parallel) {
    Routes();
  }

  Result<int> Bind() {
    const int port = options_.port == 0 ? http_.bind_to_any_port(options_.host)
                                        : (http_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port < 0)
      return FailedPrecondition("serve: cannot listen on " + options_.host + ":" +
                         std::to_string(options_.port) + " (address in use or not available)");
    return port;
  }

  void Listen() { http_.listen_after_bind(); }

  void SetModel(std::unique_ptr<ServedModel> model) {
    served_ = std::move(model);
    scheduler_ = std::make_unique<Scheduler>(*served_->model, options_.parallel, options_.queue, &metrics_);
    ready_ = true;
  }

  void Stop() {
    draining_ = true;
    if (scheduler_) scheduler_->Shutdown(std::chrono::milliseconds(options_.shutdown_grace_ms));
    http_.stop();
  }

 private:
  void Routes() {
    // Handlers block while their request generates; one thread per slot and queued request
    // (plus a few for the cheap routes) keeps a full queue from starving /health and /metrics.
    const size_t threads = static_cast<size_t>(options_.parallel + options_.queue + 8);
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http_.set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
    http_.set_read_timeout(30);
    http_.set_write_timeout(30);

    http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      t_request_start = Clock::now();
      if (!options_.api_key.empty() && req.path.rfind("/v1/", 0) == 0 &&
          req.get_header_value("Authorization") != "Bearer " + options_.api_key) {
        ApiError e;
        e.status = 401;
        e.type = "authentication_error";
        e.code = "invalid_api_key";
        e.message = req.has_header("Authorization") ? "invalid API key"
                                                    : "missing API key (Authorization: Bearer KEY)";
        SendError(res, e);
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // Statuses httplib produces itself (404 route, 413 body, 400 bad HTTP) get OpenAI's error body.
    http_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      ApiError e;
      e.status = res.status;
      if (res.status == 404) {
        e.message = "no route " + req.method + " " + req.path;
        e.code = "not_found";
      } else if (res.status == 413) {
        e.message = "the request body is over the server's limit (--max-body)";
        e.code = "request_too_large";
      } else {
        e.message = "HTTP status " + std::to_string(res.status);
      }
      SendError(res, e);
    });
    http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown error";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& ex) {
        what = ex.what();
      } catch (...) {
      }
      SendError(res, ServerError(500, "internal error: " + what, "internal_error"));
    });
    // Counted before the response is written (the logger runs after it), so a client that has its
    // answer and then reads /metrics finds the request counted.
    http_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      metrics_.CountRequest(MetricsEndpoint(req.path), res.status);
    });
    http_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      const double seconds = std::chrono::duration<double>(Clock::now() - t_request_start).count();
      const std::string endpoint = MetricsEndpoint(req.path);
      if (endpoint == "/v1/chat/completions" || endpoint == "/v1/completions")
        metrics_.ObserveRequestDuration(seconds);
      std::fprintf(stderr, "%s %s %d %.1f ms\n", req.method.c_str(), req.path.c_str(), res.status,
                   seconds * 1e3);
    });

    http_.Get("/", [](const httplib::Request&, httplib::Response& res) {
      const std::string_view html = DashboardHtml();
      res.set_content(html.data(), html.size(), "text/html; charset=utf-8");
    });
    http_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      if (ready_ && !draining_) {
        SendJson(res, 200, {{"status", "ok"}});
      } else {
        SendJson(res, 503, {{"status", draining_ ? "stopping" : "loading"}});
      }
    });
    http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_.RenderPrometheus(), "text/plain; version=0.0.4");
    });
    http_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      if (!Ready(res)) return;
      SendJson(res, 200, {{"object", "list"}, {"data", ojson::array({ModelEntry()})}});
    });
    http_.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Ready(res)) return;
      if (req.matches[1] != served_->alias) return SendError(res, UnknownModel(req.matches[1]));
      SendJson(res, 200, ModelEntry());
    });
    http_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      Generate(Endpoint::kChat, req, res);
    });
    http_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      Generate(Endpoint::kCompletion, req, res);
    });
  }

  bool Ready(httplib::Response& res) {
    if (draining_) {
      SendError(res, ServerError(503, "the server is shutting down", "shutting_down"));
      return false;
    }
    if (!ready_) {
      SendError(res, ServerError(503, "the model is still loading", "model_loading"));
      return false;
    }
    return true;
  }

  ApiError UnknownModel(const std::string& name) const {
    ApiError e;
    e.status = 404;
    e.param = "model";
    e.code = "model_not_found";
    e.message = "the model '" + name + "' does not exist; this server serves '" + served_->alias + "'";
    return e;
  }

  ojson ModelEntry() const {
    return {{"id", served_->alias}, {"object", "model"}, {"created", created_},
            {"owned_by", "clover"}, {"meta", served_->card}};
  }

  void Generate(Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
    const Clock::time_point arrival = t_request_start;
    if (!Ready(res)) return;
    const json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) return SendError(res, InvalidRequest("", "the request body is not valid JSON"));

    auto gen = std::make_shared<Generation>();
    std::optional<ApiError> error;
    std::string model_name;
    if (endpoint == Endpoint::kChat) {
      ChatRequest chat;
      error = ParseChatRequest(body, &chat);
      model_name = chat.sampling.model;
      if (!error && (model_name.empty() || model_name == served_->alias))
        error = PrepareChat(*served_, chat, arrival, gen.get());
    } else {
      CompletionRequest completion;
      error = ParseCompletionRequest(body, &completion);
      model_name = completion.sampling.model;
      if (!error && (model_name.empty() || model_name == served_->alias))
        error = PrepareCompletion(*served_, completion, arrival, gen.get());
    }
    if (error) return SendError(res, *error);
    if (!model_name.empty() && model_name != served_->alias) return SendError(res, UnknownModel(model_name));

    for (size_t i = 0; i < gen->choices.size(); ++i) {
      if (!scheduler_->Submit(gen->choices[i].job)) {
        for (size_t j = 0; j < i; ++j) gen->choices[j].job->Cancel();
        return SendError(res, ServerError(503, draining_ ? "the server is shutting down"
                                                         : "the server is busy: every slot and queue place is taken; retry later",
                                          draining_ ? "shutting_down" : "queue_full"));
      }
    }
    if (gen->stream) return Stream(gen, req, res);

    // A client that hangs up cancels its generation: its connection is looked up once (the
    // first wait lets short requests finish without the lookup) and polled between waits.
    int peer = -2;  // -2: not looked up yet, -1: not found
    for (Choice& c : gen->choices) {
      while (!c.done) {
        for (JobEvent& ev : c.job->Wait(kStreamProbeInterval)) Apply(c, std::move(ev));
        if (c.done) break;
        if (peer == -2) peer = FindPeerSocket(req.remote_addr, req.remote_port);
        if (peer >= 0 && PeerClosed(peer))
          for (Choice& other : gen->choices) other.job->Cancel();
      }
    }
    for (const Choice& c : gen->choices) {
      if (!c.status.ok())
        return SendError(res, ServerError(500, "generation failed: " + c.status.message(), "generation_failed"));
      if (c.result.cancelled)
        return SendError(res, ServerError(503, "the server is shutting down", "shutting_down"));
    }
    SendJson(res, 200, ResponseJson(*gen));
  }

  // Server-sent events: a role chunk per choice, then one chunk per decoder step that produced
  // text (a resolved block, or a token for AR), the finish chunks, the optional usage chunk and
  // [DONE]. A failed write (client gone) cancels every choice's generation.
  void Stream(std::shared_ptr<Generation> gen, const httplib::Request& req, httplib::Response& res) {
    auto started = std::make_shared<bool>(false);
    auto peer = std::make_shared<int>(-2);  // the connection's socket; -2: not looked up yet
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [gen, started, peer, addr = req.remote_addr, port = req.remote_port,
         last_write = std::make_shared<Clock::time_point>(Clock::now())](size_t, httplib::DataSink& sink) {
          auto send = [&sink, &last_write](const ojson& obj) {
            const std::string line = "data: " + obj.dump() + "\n\n";
            *last_write = Clock::now();
            return sink.write(line.data(), line.size());
          };
          if (!*started) {
            *started = true;
            for (size_t i = 0; i < gen->choices.size(); ++i)
              if (!send(ChunkJson(*gen, i, {}, /*first=*/true, false))) return false;
            return true;
          }
          bool all_done = true;
          for (size_t i = 0; i < gen->choices.size(); ++i) {
            Choice& c = gen->choices[i];
            if (c.done) continue;
            all_done = false;
            const auto wait = gen->choices.size() == 1 ? kStreamProbeInterval : std::chrono::milliseconds(10);
            for (JobEvent& ev : c.job->Wait(wait)) {
              const bool done = ev.done;
              MessageDelta delta = Apply(c, std::move(ev));
              if (done && !c.status.ok()) {
                const ojson err = ServerError(500, "generation failed: " + c.status.message(), "generation_failed").ToJson();
                send(err);
                sink.done();
                return true;
              }
              if (!delta.empty() && !send(ChunkJson(*gen, i, delta, false, false))) return false;
              if (done && !send(ChunkJson(*gen, i, {}, false, /*finish=*/true))) return false;
            }
          }
          if (all_done) {
            if (gen->include_usage && !send(UsageChunkJson(*gen))) return false;
            static const char kDone[] = "data: [DONE]\n\n";
            sink.write(kDone, sizeof kDone - 1);
            sink.done();
            return true;
          }
          // A closed connection is seen on its socket at once; a failed write of the periodic
          // probe catches it where the socket could not be found. Passes that produce no text
          // write nothing, so the probe goes by the time of the last write.
          if (*peer == -2) *peer = FindPeerSocket(addr, port);
          if (*peer >= 0 && PeerClosed(*peer)) return false;
          if (Clock::now() - *last_write >= kStreamProbeInterval) {
            static const char kProbe[] = ": ping\n\n";
            *last_write = Clock::now();
            return sink.write(kProbe, sizeof kProbe - 1);
          }
          return true;
        },
        [gen](bool success) {
          if (!success)
            for (Choice& c : gen->choices) c.job->Cancel();
        });
  }

  ServerOptions options_;
  Metrics metrics_;
  httplib::Server http_;
  std::unique_ptr<ServedModel> served_;
  std::unique_ptr<Scheduler> scheduler_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};
  const int64_t created_ = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
};

HttpServer::HttpServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
HttpServer::~HttpServer() = default;
Result<int> HttpServer::Bind() { return impl_->Bind(); }
void HttpServer::Listen() { impl_->Listen(); }
void HttpServer::SetModel(std::unique_ptr<ServedModel> model) { impl_->SetModel(std::move(model)); }
void HttpServer::Stop() { impl_->Stop(); }

}  // namespace clover::server
