// The SQL text of one incremental chunk, or of a snapshot, built from the table's config:
// every identifier quoted, every bound a typed literal made of digits (COPY
// takes no parameters). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/sql/column_shape.h"
#include "core/sql/copy_format.h"
#include "core/sql/page_range.h"
#include "core/sql/relation_kind.h"
#include "core/watermark/window_plan.h"

namespace tidemark {

struct LoadStatements {
  // On the source, sent together as one transaction: the source table's
  // locks (a table rewritten or truncated while a COPY waited for it would
  // be read in a snapshot taken before, and look empty; locks taken first
  // leave the COPY a snapshot taken after), then every source column's
  // name and format_type() as the locks hold them, then the rows.
  std::string lock_source;      // the window's query, LIMIT 0; empty for a foreign table: no storage here
  std::string source_columns;   // (name, type) rows, in column order
  std::string copy_out;         // COPY (SELECT ... half-open window) TO STDOUT
  std::string lock_target;      // keeps an empty target empty until a first load commits
  std::string target_is_empty;  // one boolean
  std::string create_stage;     // temp table with the target's column types, dropped at commit
  std::string copy_into_stage;  // COPY stage FROM STDIN
  // COPY target FROM STDIN (first load into an empty table); empty when
  // every column is in the key, which must go through the upsert.
  std::string copy_into_target;
  std::string upsert;           // stage -> target on the key; unchanged rows are not rewritten
  std::string stage;            // the stage's quoted name
  // A snapshot's only (no window): on the source, between the lock and
  // the columns, the source's clock in microseconds since 1970 (on a hot
  // standby, the last replayed commit's time; NULL before any): no later
  // than the COPY's snapshot, which a READ COMMITTED statement (every
  // session pins that level) takes when it starts.
  std::string source_clock;
  // A snapshot's only: deletes the target rows whose key the stage lacks;
  // `clear_target` deletes them all, for a source table without rows
  // (which leaves no stage).
  std::string delete_gone;
  std::string clear_target;
};

// Requires a source table (incremental, snapshot or append) and a
// non-empty `columns` that includes the key (and the cursor). A table
// without a key gets no stage, upsert or delete_gone: its rows go
// straight into the target (copy_into_target).
// `window` nothing reads the whole table (a snapshot); `source_catalog`
// then says which key columns can hold NULL, which delete_gone matches
// NULL-safely. `format` is that of all three COPY statements
// (core/sql/copy_format.h says when binary is safe); `kind` says how the
// source table is locked.
// One statement on the source (Source::probe): whether `range` holds a
// row (true when there is no range to ask about), then the number of rows
// whose cursor is NULL and of those whose cursor is infinity or -infinity
// (none for an integer cursor; none NULL when `never_null`, which the
// statement then does not ask, sparing its planning). A plain SELECT takes
// its table's locks as it is parsed and its snapshot after: a table
// rewritten or truncated meanwhile is seen as it was left, not empty
// (unlike COPY's query, hence lock_source). The cursor's index answers
// both.
std::string window_probe_statement(const TableConfig& table, const std::optional<Window>& range, CursorType type,
                                   bool never_null);

// `target_catalog`, the target's columns: where the cursor's target column
// is of a type whose `=` is equality of images, the upsert tests it before
// comparing the whole row's image (without it, only the image).
LoadStatements build_load_statements(const TableConfig& table, const std::vector<std::string>& columns,
                                     const std::optional<Window>& window, CopyFormat format = CopyFormat::Text,
                                     RelationKind kind = RelationKind::Table,
                                     const std::vector<ColumnShape>& source_catalog = {},
                                     const std::vector<ColumnShape>& target_catalog = {});

// A ranged first load's COPY of the rows on `pages` (core/sql/page_range.h),
// the columns and format as build_load_statements' copy_out.
std::string range_copy_out(const TableConfig& table, const std::vector<std::string>& columns, CopyFormat format,
                           const PageRange& pages);

}  // namespace tidemark
