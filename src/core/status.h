// Status and Result<T>: the error values every fallible step in clover returns (no exceptions).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace clover {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad request, bad flag, bad config value
  kNotFound,           // missing file, tensor, key
  kDataLoss,           // corrupt or truncated file
  kUnimplemented,      // a valid construct we do not support (yet)
  kOutOfRange,         // index/offset/length beyond a bound
  kResourceExhausted,  // over a size or memory limit
  kFailedPrecondition, // operation not allowed in the current state
  kCancelled,          // stopped by the caller
  kInternal,           // a bug: never reachable from input
};

// Returns a stable lower-case name of `code` ("invalid_argument", ...).
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Returns "code: message" (or "ok").
  std::string ToString() const;
  // Returns a copy whose message is prefixed with `context + ": "`.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status DataLoss(std::string message);
Status Unimplemented(std::string message);
Status OutOfRange(std::string message);
Status ResourceExhausted(std::string message);
Status FailedPrecondition(std::string message);
Status Cancelled(std::string message);
Status Internal(std::string message);

// Result<T> holds either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok() && "Result constructed from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(data_); }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace clover

#define CLOVER_CONCAT_INNER_(a, b) a##b
#define CLOVER_CONCAT_(a, b) CLOVER_CONCAT_INNER_(a, b)

// Returns early from the enclosing function if `expr` (a Status) is not ok.
#define CLOVER_TRY(expr)                        \
  do {                                          \
    ::clover::Status clover_status_ = (expr);   \
    if (!clover_status_.ok()) return clover_status_; \
  } while (0)

#define CLOVER_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

// `lhs = value of expr` or return its Status from the enclosing function.
#define CLOVER_ASSIGN_OR_RETURN(lhs, expr) \
  CLOVER_ASSIGN_OR_RETURN_IMPL_(CLOVER_CONCAT_(clover_result_, __LINE__), lhs, expr)
