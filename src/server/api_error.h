// OpenAI-style API errors: an HTTP status and the {"error": {...}} body.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace clover::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the offending request field, "" when none
  std::string code;   // machine-readable reason, "" when none

  // Returns {"error": {"message", "type", "param", "code"}} (param/code null when empty).
  nlohmann::ordered_json ToJson() const;
};

// 400 invalid_request_error naming `param`.
ApiError InvalidRequest(std::string param, std::string message, std::string code = "");

}  // namespace clover::server
