#include "daemon/pg/libpq/result_columns.h"

#include <cstdlib>

namespace tidemark {

ResultColumns::ResultColumns(const PgResult& result) {
  for (int i = 0; i < result.columns(); ++i) index_.emplace(result.column_name(i), i);
}

int ResultColumns::operator()(std::string_view name) const {
  const auto found = index_.find(name);
  if (found == index_.end()) std::abort();  // the statement returns no such column
  return found->second;
}

}  // namespace tidemark
