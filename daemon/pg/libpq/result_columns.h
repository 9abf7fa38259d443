// A result's columns by name: the names looked up once per result, so
// that a row is read by what its columns are called, not by where they
// stand in the statement. A name the statement does not return is a bug
// in the statement beside it: it aborts. Borrows the result; one thread.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "daemon/pg/libpq/pg_result.h"

namespace tidemark {

class ResultColumns {
 public:
  explicit ResultColumns(const PgResult& result);

  // The index of the column called `name`.
  int operator()(std::string_view name) const;

 private:
  std::map<std::string, int, std::less<>> index_;
};

}  // namespace tidemark
