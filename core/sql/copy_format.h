// Which COPY format carries one table's rows from the source to the target:
// binary when both sides read it the same way, text otherwise. A pure
// decision on what inspection found; thread-safe. Owned by the load path
// (daemon/pg/data/pg_target decides once per run, pg_unit_of_work uses it).
#pragma once

#include <string>
#include <vector>

#include "core/sql/column_shape.h"

namespace tidemark {

enum class CopyFormat { Text, Binary };

// One copied column's type as one side sees it.
struct CopyColumnType {
  std::string name;           // format_type(): "numeric(12,2)", "timestamp with time zone", "text[]"
  bool portable_binary = false;  // a built-in type with binary send and receive
};

// The catalog expression, over pg_type aliased `t` (a column's type), that
// fills CopyColumnType::portable_binary: built in (an OID below
// FirstNormalObjectId, the same in every database) with binary send and
// receive functions. False when there is no such type.
// Not the OID alias types (regclass, regtype, regconfig, ... and their
// arrays): their binary value is the object's OID in the source database,
// which names another object, or none, in the target, where their text
// (the object's name) is looked up again. Not composites (nor arrays of
// them) either: a row type's binary value carries its fields' type OIDs,
// and the catalogs' row types hold OID aliases. Nor arrays of a type
// without binary I/O (aclitem[]), which could not be sent at all.
inline constexpr const char* kPortableBinarySql =
    "coalesce(t.oid < 16384 and t.typsend::oid <> 0 and t.typreceive::oid <> 0"
    " and t.typname !~ '^_?reg' and t.typtype <> 'c'"
    " and not exists (select from pg_type e where e.oid = t.typelem"
    " and (e.typtype = 'c' or e.typsend::oid = 0 or e.typreceive::oid = 0)), false)";

// Binary saves the target parsing every value from text (about a third of
// a first load's time on the target, most of it timestamps and numerics),
// but a binary value is read as the target column's type without any
// conversion, and arrays and records name their element types by OID. So
// binary only when the two servers are of one major version and every
// column has exactly the same type on both sides, a built-in one (its OID
// is the same in every database) that has binary I/O. Lists of unequal
// length, or none, give text.
CopyFormat choose_copy_format(const std::vector<CopyColumnType>& source, const std::vector<CopyColumnType>& target,
                              bool same_major_version);

// What the target's check found: the type of each target column, and
// whether the two servers share a major version. Each chunk chooses its
// format from it, so that a column appended by the chunk's own unit of
// work (not known here) keeps that chunk in text.
struct TargetCopyTypes {
  std::vector<ColumnShape> columns;  // every target column
  bool same_major_version = false;

  // The format for copying `copied`, looked up by name in the source's
  // columns and the target's; a column either lacks gives text.
  CopyFormat format_for(const std::vector<std::string>& copied, const std::vector<ColumnShape>& source) const;
};

}  // namespace tidemark
