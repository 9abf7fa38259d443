// The Source over a source database connection: inspects the table and
// reads the window's upper bound from the source's own clock. Owns nothing;
// used by one run on one thread.
#pragma once

#include <functional>
#include <string>

#include "core/run_ports.h"
#include "daemon/pg_connection.h"

namespace tidemark {

class PgSource final : public Source {
 public:
  // `warn`, when given, receives a message that deserves one log line per
  // connection, such as missing permission to see other sessions' transactions.
  explicit PgSource(PgConnection& connection, std::function<void(const std::string&)> warn = nullptr)
      : connection_(connection), warn_(std::move(warn)) {}

  Result<SourceTable> inspect(const TableConfig& table) override;
  Result<std::optional<CursorValue>> upper_bound(const TableConfig& table, CursorType type) override;
  Result<std::optional<CursorValue>> lower_bound(const TableConfig& table, CursorType type) override;
  Result<Instant> clock() override;

  PgConnection& connection() { return connection_; }

 private:
  PgConnection& connection_;
  std::function<void(const std::string&)> warn_;
  bool visibility_checked_ = false;
};

}  // namespace tidemark
