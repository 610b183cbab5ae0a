// The HTTP server in-process on a loopback port with the demo model, driven by httplib's client:
// routes, auth, limits, error shapes, non-streaming vs streaming output, usage counts. (The
// official-client, browser and load tests are in tests/server/js.)
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <thread>

#include "core/cpu_features.h"
#include "kernels/kernel_table.h"
#include "model/loader.h"

namespace clover::server {
namespace {

using json = nlohmann::json;

const std::string kDemo = std::string(CLOVER_SOURCE_DIR) + "/models/clover-demo";

// One server per test suite: loading is cheap, but the port and threads are not free.
class HttpServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kDemo + "/config.json")) return;
    auto w = model::LoadModel(kDemo);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    weights_ = new model::ModelWeights(std::move(*w));
    pool_ = new ThreadPool(2);
    ctx_ = new kernels::KernelContext{*pool_, *kernels::SelectKernelTable().value()};
    auto m = model::Model::Create(*weights_, *ctx_);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = m->release();
    ServerOptions o;
    o.port = 0;
    o.api_key = "sekret";
    o.parallel = 2;
    o.queue = 4;
    o.max_body_bytes = 4096;
    server_ = new HttpServer(o);
    auto port = server_->Bind();
    ASSERT_TRUE(port.ok());
    port_ = *port;
    listener_ = new std::thread([] { server_->Listen(); });
    auto served = LoadServedModel(*model_, *weights_, kDemo, "demo", /*ctx=*/256);
    ASSERT_TRUE(served.ok()) << served.status().ToString();
    server_->SetModel(std::move(*served));
  }
  static void TearDownTestSuite() {
    if (server_ == nullptr) return;
    server_->Stop();
    listener_->join();
    delete listener_;
    delete server_;
    delete model_;
    delete ctx_;
    delete pool_;
    delete weights_;
  }
  void SetUp() override {
    if (server_ == nullptr) GTEST_SKIP() << "models/clover-demo is not there";
  }

  static httplib::Client Client(bool auth = true) {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60);
    if (auth) c.set_bearer_token_auth("sekret");
    return c;
  }
  static json Body(const httplib::Result& r) { return json::parse(r->body); }
  static json Chat(const std::string& question, bool stream = false) {
    return {{"messages", {{{"role", "user"}, {"content", question}}}},
            {"temperature", 0},
            {"enable_thinking", false},
            {"stream", stream},
            {"stream_options", {{"include_usage", true}}}};
  }

  static inline model::ModelWeights* weights_ = nullptr;
  static inline ThreadPool* pool_ = nullptr;
  static inline kernels::KernelContext* ctx_ = nullptr;
  static inline model::Model* model_ = nullptr;
  static inline HttpServer* server_ = nullptr;
  static inline std::thread* listener_ = nullptr;
  static inline int port_ = 0;
  friend int HttpServerTestPort();
};

int HttpServerTestPort() { return HttpServerTest::port_; }

int HttpServerTestPort();

void ExpectError(const httplib::Result& r, int status, const std::string& type, const std::string& param = "") {
  ASSERT_TRUE(r) << "no response";
  EXPECT_EQ(r->status, status) << r->body;
  const json j = json::parse(r->body, nullptr, false);
  ASSERT_TRUE(j.contains("error")) << r->body;
  EXPECT_EQ(j["error"]["type"], type) << r->body;
  EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
  if (!param.empty()) {
    EXPECT_EQ(j["error"]["param"], param) << r->body;
  }
}

TEST_F(HttpServerTest, HealthModelsMetricsAndDashboardNeedNoKeyExceptModels) {
  auto c = Client(false);
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(Body(h)["status"], "ok");
  auto d = c.Get("/");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->status, 200);
  EXPECT_NE(d->body.find("<html"), std::string::npos);
  EXPECT_NE(c.Get("/metrics")->body.find("clover_slots 2"), std::string::npos);
  ExpectError(c.Get("/v1/models"), 401, "authentication_error");

  auto m = Client().Get("/v1/models");
  ASSERT_TRUE(m);
  const json list = Body(m);
  EXPECT_EQ(list["object"], "list");
  EXPECT_EQ(list["data"][0]["id"], "demo");
  EXPECT_EQ(list["data"][0]["meta"]["family"], "clover_moe");
  EXPECT_EQ(list["data"][0]["meta"]["context"], 256);
  EXPECT_GT(list["data"][0]["meta"]["params"].get<int64_t>(), 0);
  EXPECT_EQ(Client().Get("/v1/models/demo")->status, 200);
  ExpectError(Client().Get("/v1/models/other"), 404, "invalid_request_error", "model");
}

TEST_F(HttpServerTest, ErrorsHaveOpenAiShapesAndStatuses) {
  auto c = Client();
  const std::string ok = Chat("Hi").dump();
  ExpectError(Client(false).Post("/v1/chat/completions", ok, "application/json"), 401, "authentication_error");
  httplib::Client wrong("127.0.0.1", port_);
  wrong.set_bearer_token_auth("nope");
  ExpectError(wrong.Post("/v1/chat/completions", ok, "application/json"), 401, "authentication_error");
  ExpectError(c.Get("/v1/nothing"), 404, "invalid_request_error");
  ExpectError(c.Post("/v1/chat/completions", "{not json", "application/json"), 400, "invalid_request_error");
  json bad_model = Chat("Hi");
  bad_model["model"] = "gpt-9";
  ExpectError(c.Post("/v1/chat/completions", bad_model.dump(), "application/json"), 404,
              "invalid_request_error", "model");
  json n2 = Chat("Hi");
  n2["n"] = 2;
  ExpectError(c.Post("/v1/chat/completions", n2.dump(), "application/json"), 400, "invalid_request_error", "n");
  ExpectError(c.Post("/v1/chat/completions", std::string(5000, ' '), "application/json"), 413,
              "invalid_request_error");
  // Over the 256-token context: the message names both numbers.
  std::string long_text;
  for (int i = 0; i < 300; ++i) long_text += "7 ";
  auto r = c.Post("/v1/completions", json{{"prompt", long_text}}.dump(), "application/json");
  ExpectError(r, 400, "invalid_request_error", "prompt");
  EXPECT_NE(r->body.find("256"), std::string::npos) << r->body;
  auto ids = c.Post("/v1/completions", json{{"prompt", {1, 2, 999999}}}.dump(), "application/json");
  ExpectError(ids, 400, "invalid_request_error", "prompt");
}

TEST_F(HttpServerTest, ChatAnswersAndStreamAgreesWithNonStream) {
  auto c = Client();
  auto r = c.Post("/v1/chat/completions", Chat("What is the capital of France?").dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = Body(r);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "demo");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  const std::string answer = j["choices"][0]["message"]["content"];
  EXPECT_EQ(answer, "The capital of France is Paris.");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  const json usage = j["usage"];
  EXPECT_GT(usage["prompt_tokens"].get<int>(), 5);
  EXPECT_GT(usage["completion_tokens"].get<int>(), 3);
  EXPECT_EQ(usage["total_tokens"], usage["prompt_tokens"].get<int>() + usage["completion_tokens"].get<int>());
  EXPECT_EQ(usage["clover"]["decoder"], "diffusion");
  EXPECT_GE(usage["clover"]["blocks"].get<int>(), 1);

  std::string sse;
  auto s = c.Post("/v1/chat/completions", Chat("What is the capital of France?", true).dump(), "application/json");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->status, 200);
  EXPECT_NE(s->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  std::string content;
  std::string finish;
  json stream_usage;
  bool saw_done = false, saw_role = false;
  std::istringstream lines(s->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("data: ", 0) != 0) continue;
    const std::string data = line.substr(6);
    if (data == "[DONE]") {
      saw_done = true;
      continue;
    }
    const json chunk = json::parse(data);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    if (chunk.contains("usage")) {
      stream_usage = chunk["usage"];
      EXPECT_TRUE(chunk["choices"].empty());
      continue;
    }
    const json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("role")) saw_role = true;
    if (delta.contains("content")) content += delta["content"].get<std::string>();
    if (!chunk["choices"][0]["finish_reason"].is_null()) finish = chunk["choices"][0]["finish_reason"];
  }
  EXPECT_TRUE(saw_role);
  EXPECT_TRUE(saw_done);
  EXPECT_EQ(content, answer);
  EXPECT_EQ(finish, "stop");
  EXPECT_EQ(stream_usage["prompt_tokens"], usage["prompt_tokens"]);
  EXPECT_EQ(stream_usage["completion_tokens"], usage["completion_tokens"]);
}

TEST_F(HttpServerTest, CompletionsTakeSeveralPromptsAndStopStrings) {
  auto c = Client();
  const std::string prompt = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
                             "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  auto r = c.Post("/v1/completions",
                  json{{"prompt", {prompt, prompt}}, {"temperature", 0}, {"stop", "France"}}.dump(),
                  "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = Body(r);
  EXPECT_EQ(j["object"], "text_completion");
  ASSERT_EQ(j["choices"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(j["choices"][i]["index"], i);
    EXPECT_EQ(j["choices"][i]["text"], "The capital of ");
    EXPECT_EQ(j["choices"][i]["finish_reason"], "stop");
  }
}

// Returns the value of an unlabelled metric, or -1.
double Metric(const std::string& name) {
  httplib::Client c("127.0.0.1", HttpServerTestPort());
  auto r = c.Get("/metrics");
  const std::string key = "\n" + name + " ";
  const size_t at = r ? r->body.find(key) : std::string::npos;
  return at == std::string::npos ? -1 : std::stod(r->body.substr(at + key.size()));
}

TEST_F(HttpServerTest, ClientThatDisconnectsFreesItsSlot) {
  const json body = {{"prompt", "a b c"}, {"stream", true}, {"ignore_eos", true},
                     {"max_tokens", 4000}, {"clover", {{"decoder", "ar"}}}};
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.set_header("Authorization", "Bearer sekret");
  int chunks = 0;
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 5; };
  auto c = Client();
  auto r = c.send(req);  // the receiver's false closes the connection mid-stream
  EXPECT_GE(chunks, 5);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (Metric("clover_active_slots") != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(Metric("clover_active_slots"), 0) << "the slot was not freed within a second of the disconnect";
  // Cut short: far fewer than the 4000 tokens asked for were generated (by every test together).
  EXPECT_LT(Metric("clover_completion_tokens_total"), 2000);
}

}  // namespace
}  // namespace clover::server
