#include "server/api_error.h"

namespace clover::server {

nlohmann::ordered_json ApiError::ToJson() const {
  nlohmann::ordered_json e = {{"message", message}, {"type", type}};
  e["param"] = param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(param);
  e["code"] = code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(code);
  return {{"error", e}};
}

ApiError InvalidRequest(std::string param, std::string message, std::string code) {
  ApiError e;
  e.status = 400;
  e.param = std::move(param);
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

}  // namespace clover::server
