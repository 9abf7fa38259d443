// A trigger that runs BEFORE INSERT or UPDATE for each row, on a table or
// on one of its partitions: it can change the values a write stores. A
// value type, as the catalog describes it.
#pragma once

#include <string>

#include "core/text/sql_identifier.h"

namespace tidemark {

struct RowTrigger {
  QualifiedName table;  // the relation it is defined on: the table itself or a partition
  std::string name;
};

}  // namespace tidemark
