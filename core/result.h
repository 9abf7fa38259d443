// A value or the reason there is none: how core/ reports expected failures
// (a bad duration, an unparsable cron field) without exceptions.
// A plain value type; copy and move freely, not synchronised.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tidemark {

// Whether trying again can help. A transient failure (a connection lost,
// a timeout, a serialization conflict, a lock taken) may pass by itself; a
// permanent one (the configuration, the schema, a query) needs a person,
// so retrying it only adds load and noise.
enum class ErrorKind { Transient, Permanent };

// The kind's one spelling: in run rows (error_kind), metric labels,
// status and log lines.
inline std::string_view error_kind_name(ErrorKind kind) {
  return kind == ErrorKind::Permanent ? "permanent" : "transient";
}
// Reads it back; anything else is transient, as a failure of unknown kind is.
inline ErrorKind error_kind_named(std::string_view name) {
  return name == error_kind_name(ErrorKind::Permanent) ? ErrorKind::Permanent : ErrorKind::Transient;
}

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::Transient;
};

inline Error permanent_error(std::string message) { return Error{std::move(message), ErrorKind::Permanent}; }

template <class T>
class Result {
 public:
  using value_type = T;

  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : error_(std::move(error)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  // Requires ok(); aborts otherwise, since reading a missing value is a bug.
  const T& value() const& {
    if (!value_) std::abort();
    return *value_;
  }
  T&& value() && {
    if (!value_) std::abort();
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

  // Requires !ok().
  const std::string& error() const { return failure().message; }
  ErrorKind error_kind() const { return failure().kind; }
  const Error& failure() const {
    if (value_) std::abort();
    return error_;
  }

 private:
  std::optional<T> value_;
  Error error_;
};

// What succeeds with no value.
struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace tidemark
