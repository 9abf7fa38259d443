// A table's column as PostgreSQL's catalog lists it: what schema drift
// compares and what the COPY format is chosen from. A value type.
#pragma once

#include <string>

namespace tidemark {

struct ColumnShape {
  std::string name;
  std::string type;  // as PostgreSQL's format_type() writes it: numeric(12,2), text, character varying(20)
  // A built-in type with binary send and receive (core/sql/copy_format.h,
  // kPortableBinarySql); a property of `type`, so equality ignores it.
  bool portable_binary = false;

  bool operator==(const ColumnShape& other) const { return name == other.name && type == other.type; }
  bool operator!=(const ColumnShape& other) const { return !(*this == other); }
};

}  // namespace tidemark
