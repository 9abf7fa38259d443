#include "daemon/pg/libpq/pg_result.h"

#include <libpq-fe.h>

#include <charconv>
#include <cstring>

namespace tidemark {

void PgResult::Clear::operator()(pg_result* result) const { PQclear(result); }
int PgResult::rows() const { return PQntuples(result_.get()); }
bool PgResult::is_null(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
std::string PgResult::text(int row, int column) const { return PQgetvalue(result_.get(), row, column); }
std::string_view PgResult::view(int row, int column) const {
  return std::string_view(PQgetvalue(result_.get(), row, column),
                          static_cast<std::size_t>(PQgetlength(result_.get(), row, column)));
}
int PgResult::columns() const { return PQnfields(result_.get()); }
std::string PgResult::column_name(int column) const { return PQfname(result_.get(), column); }

std::optional<std::string> PgResult::optional_text(int row, int column) const {
  if (is_null(row, column)) return std::nullopt;
  return text(row, column);
}

std::int64_t PgResult::integer(int row, int column) const {
  const char* value = PQgetvalue(result_.get(), row, column);
  std::int64_t out = 0;
  const auto [end, ec] = std::from_chars(value, value + std::strlen(value), out);
  if (ec != std::errc() || *end != '\0') {
    throw PgError(ErrorKind::Transient, std::string("expected an integer, got \"") + value + "\"");
  }
  return out;
}

std::int64_t PgResult::affected() const {
  const char* n = PQcmdTuples(result_.get());
  return (n && *n) ? std::stoll(n) : 0;
}

}  // namespace tidemark
