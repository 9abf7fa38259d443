// A query's result, its rows read as text; owns libpq's result and frees
// it. Made by PgConnection; movable, not copyable; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/pg/libpq/pg_error.h"

namespace tidemark {

class PgResult {
 public:
  explicit PgResult(pg_result* result) : result_(result) {}

  int rows() const;
  bool is_null(int row, int column) const;
  std::string text(int row, int column) const;
  // The value's text in place, valid while this result lives.
  std::string_view view(int row, int column) const;
  std::optional<std::string> optional_text(int row, int column) const;
  std::int64_t integer(int row, int column) const;  // requires a non-null integer
  bool boolean(int row, int column) const { return text(row, column) == "t"; }
  int columns() const;
  std::string column_name(int column) const;
  // Rows affected by INSERT/UPDATE/DELETE/COPY.
  std::int64_t affected() const;
  // libpq's result, for daemon/pg's own use.
  const pg_result* raw() const { return result_.get(); }

 private:
  struct Clear {
    void operator()(pg_result* result) const;
  };
  std::unique_ptr<pg_result, Clear> result_;
};

}  // namespace tidemark
