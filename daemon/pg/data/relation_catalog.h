// What the catalogs say of a relation beyond its columns, as SQL
// expressions that fit into a larger query (one round trip) and the
// parsing of what they return: its unique indexes, and the triggers that
// may change a row as it is written; and a target table read whole. Used
// by PgSource::inspect, PgTarget::check and the unit of work that creates
// a target. Pure functions but the read; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/run/target_fit.h"
#include "core/sql/column_shape.h"
#include "core/sql/row_trigger.h"
#include "core/sql/unique_index.h"
#include "core/text/sql_identifier.h"

namespace tidemark {

class PgConnection;

// How a column fills itself, from pg_attribute's attidentity and
// attgenerated as text.
ColumnFill column_fill(const std::string& identity, const std::string& generated);

// A json expression listing the unique indexes of `relation` (an SQL
// expression of type regclass) on a server of `server_major` version
// (NULLS NOT DISTINCT came with 15).
std::string unique_indexes_sql(const std::string& relation, int server_major);
// Its value (NULL text: none). Throws PgError on text it did not make.
std::vector<UniqueIndex> parse_unique_indexes(const std::string& json);

// A boolean expression: whether the column `attribute` (an alias of
// pg_attribute) holds no NULL. PostgreSQL 18 keeps attnotnull set under a
// NOT NULL ... NOT VALID, which existing rows need not meet.
std::string validated_not_null_sql(const std::string& attribute);

// A text expression: the collation of the column `attribute` (an alias of
// pg_attribute) when it is nondeterministic, else ''.
std::string nondeterministic_collation_sql(const std::string& attribute);

// A json expression: the column `attribute`'s enum type, qualified and
// quoted, and its labels in order ([name, [labels]]); NULL when its type
// is no enum. Its value, parsed into `column`. Throws PgError on text it
// did not make.
std::string enum_labels_sql(const std::string& attribute);
void parse_enum_labels(const std::string& json, ColumnShape& column);

// A json expression listing the enabled BEFORE triggers of `relation`, and
// of its partitions, that run for each row an INSERT or UPDATE writes:
// they can change what is written. Its value, parsed: the relation's own
// first. Throws PgError on text it did not make.
std::string row_changing_triggers_sql(const std::string& relation);
std::vector<RowTrigger> parse_row_triggers(const std::string& json);

// A version of `relation` that changes whenever anything the two catalog
// reads above (and PgSource::inspect, PgTarget::check) report of it may
// have changed: the identity (oid, xmin) of every catalog row they read,
// whose every update is a new row version: the relation, its columns and
// their types, defaults, indexes, triggers (its partitions' too),
// subscriptions. One short statement; nothing when no such relation is
// visible. Throws PgError.
std::optional<std::string> relation_version(PgConnection& connection, const QualifiedName& relation);

// The versions of many relations in one statement, by QualifiedName::quoted().
using RelationVersions = std::map<std::string, std::optional<std::string>>;
RelationVersions relation_versions(PgConnection& connection, const std::vector<QualifiedName>& relations);

// The target table `table` as the catalogs hold it now (in the session's
// transaction, so a table it created is seen): its columns, unique indexes
// and row-changing triggers; no columns when it does not exist. Throws
// PgError.
TargetTable read_target_table(PgConnection& target, const QualifiedName& table);

}  // namespace tidemark
