// A value or the reason there is none: how core/ reports expected failures
// (a bad duration, an unparsable cron field) without exceptions.
// A plain value type; copy and move freely, not synchronised.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace tidemark {

struct Error {
  std::string message;
};

template <class T>
class Result {
 public:
  using value_type = T;

  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : error_(std::move(error.message)) {}  // NOLINT

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
  const std::string& error() const {
    if (value_) std::abort();
    return error_;
  }

 private:
  std::optional<T> value_;
  std::string error_;
};

}  // namespace tidemark
