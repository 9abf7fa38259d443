// A unique index of a table (or the index of its primary key or of a
// unique constraint), as the catalog describes it: what decides whether a
// key identifies one row on each side. A value type.
#pragma once

#include <string>
#include <vector>

namespace tidemark {

struct UniqueIndex {
  std::string name;
  std::vector<std::string> columns;  // its key columns in order; INCLUDE columns are not among them
  bool valid = true;                 // false: a CREATE INDEX CONCURRENTLY that failed left it unusable
  bool immediate = true;             // false: DEFERRABLE, which ON CONFLICT cannot use
  bool nulls_not_distinct = false;   // NULLS NOT DISTINCT (PostgreSQL 15): a NULL key is one key
  bool partial = false;              // it has a WHERE clause
  bool expressions = false;          // some key column is an expression
  bool primary = false;              // the primary key's index

  // It makes its columns identify one row, whatever the row: valid, not
  // deferrable, without a WHERE clause or an expression.
  bool identifies_rows() const { return valid && immediate && !partial && !expressions; }
};

}  // namespace tidemark
