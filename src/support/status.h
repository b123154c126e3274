//===- support/status.h - Status and Result<T> ----------------------------===//
//
// Errors as values (STYLE.md rule 2). A Status carries a gRPC canonical code and a
// lower-case message; Result<T> is a T or a non-OK Status. Both are [[nodiscard]].
// protocol/ maps codes to gRPC and HTTP once. Thread safety: values, no shared state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace rs {

/// gRPC canonical status codes (grpc/include/grpcpp/impl/codegen/status_code_enum.h).
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

/// Upper-case gRPC name of a code, e.g. "INVALID_ARGUMENT" (used in metrics labels).
std::string_view statusCodeName(StatusCode code);

/// An OK value or an error code with a message.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "INVALID_ARGUMENT: message", or "OK".
  std::string toString() const;

  /// Returns a copy whose message is `prefix + ": " + message` (adds context going up).
  Status withPrefix(std::string_view prefix) const;

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// Builds an error message with <<, e.g. `return invalidArgument() << "bad dim " << d;`.
class StatusBuilder {
public:
  explicit StatusBuilder(StatusCode code) : code_(code) {}
  template <typename T> StatusBuilder &operator<<(const T &v) {
    std::ostringstream os;
    os << v;
    message_ += os.str();
    return *this;
  }
  operator Status() const { return Status(code_, message_); }

private:
  StatusCode code_;
  std::string message_;
};

inline StatusBuilder invalidArgument() { return StatusBuilder(StatusCode::kInvalidArgument); }
inline StatusBuilder notFound() { return StatusBuilder(StatusCode::kNotFound); }
inline StatusBuilder internalError() { return StatusBuilder(StatusCode::kInternal); }
inline StatusBuilder unimplemented() { return StatusBuilder(StatusCode::kUnimplemented); }
inline StatusBuilder failedPrecondition() { return StatusBuilder(StatusCode::kFailedPrecondition); }
inline StatusBuilder resourceExhausted() { return StatusBuilder(StatusCode::kResourceExhausted); }
inline StatusBuilder unavailable() { return StatusBuilder(StatusCode::kUnavailable); }
inline StatusBuilder deadlineExceeded() { return StatusBuilder(StatusCode::kDeadlineExceeded); }
inline StatusBuilder outOfRange() { return StatusBuilder(StatusCode::kOutOfRange); }
inline StatusBuilder dataLoss() { return StatusBuilder(StatusCode::kDataLoss); }

/// A value of type T, or a non-OK Status. Accessing value() of an error is a programmer
/// error (assert).
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) { assert(!status_.isOk()); }
  Result(const StatusBuilder &builder) : Result(Status(builder)) {}

  bool isOk() const { return value_.has_value(); }
  const Status &status() const { return status_; }

  T &value() & {
    assert(isOk());
    return *value_;
  }
  const T &value() const & {
    assert(isOk());
    return *value_;
  }
  T &&value() && {
    assert(isOk());
    return std::move(*value_);
  }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  T &operator*() { return value(); }
  const T &operator*() const { return value(); }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace rs

/// Returns early with the Status if `expr` (a Status) is not OK.
#define RS_RETURN_IF_ERROR(expr)                                                                   \
  do {                                                                                             \
    ::rs::Status rs_status_ = (expr);                                                              \
    if (!rs_status_.isOk())                                                                        \
      return rs_status_;                                                                           \
  } while (0)

#define RS_CONCAT_INNER(a, b) a##b
#define RS_CONCAT(a, b) RS_CONCAT_INNER(a, b)
/// `RS_ASSIGN_OR_RETURN(auto x, makeX());` declares x from a Result or returns its Status.
#define RS_ASSIGN_OR_RETURN(lhs, expr)                                                             \
  auto RS_CONCAT(rs_result_, __LINE__) = (expr);                                                   \
  if (!RS_CONCAT(rs_result_, __LINE__).isOk())                                                     \
    return RS_CONCAT(rs_result_, __LINE__).status();                                               \
  lhs = std::move(RS_CONCAT(rs_result_, __LINE__)).value()
