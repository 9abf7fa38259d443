// A table's column as PostgreSQL's catalog lists it: what schema drift
// compares, what the COPY format is chosen from, and what decides whether
// a target can take a load. A value type.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace tidemark {

// How a table fills a column by itself (pg_attribute.attidentity and
// attgenerated): an identity ALWAYS column refuses a value from an INSERT
// (COPY takes one), a generated one refuses any.
enum class ColumnFill { None, IdentityByDefault, IdentityAlways, Generated };

struct ColumnShape {
  std::string name;
  std::string type;  // as PostgreSQL's format_type() writes it: numeric(12,2), text, character varying(20)
  // The properties below describe the column, not its values' type:
  // equality (what drift compares) ignores them.
  // A built-in type with binary send and receive (core/sql/copy_format.h,
  // kPortableBinarySql).
  bool portable_binary = false;
  bool not_null = false;  // NOT NULL (a view's columns never are)
  ColumnFill fill = ColumnFill::None;
  // The column's collation when it is nondeterministic (values other than
  // byte-equal compare equal: case- or accent-insensitive); empty for
  // every other.
  std::string nondeterministic_collation{};
  // An enum column's type, schema-qualified and quoted, and its labels in
  // their order; empty for every other column.
  std::string enum_type{};
  std::vector<std::string> enum_labels{};

  bool operator==(const ColumnShape& other) const { return name == other.name && type == other.type; }
  bool operator!=(const ColumnShape& other) const { return !(*this == other); }
};

// The column named `name` in `columns`; nullptr when there is none.
inline const ColumnShape* find_column(const std::vector<ColumnShape>& columns, const std::string& name) {
  const auto it = std::find_if(columns.begin(), columns.end(), [&](const ColumnShape& c) { return c.name == name; });
  return it == columns.end() ? nullptr : &*it;
}

}  // namespace tidemark
