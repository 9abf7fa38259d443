// What `tidemark discover` decides for each source table (SPEC §4): its
// key, its cursor with the catalog evidence for it, or mode: snapshot, or
// for a table without a key mode: append or a snapshot without key, or
// why it is left out; and the pipeline file that says so, one per source
// schema, for `validate` to accept as written. Pure functions of the
// catalog (core/discover/source_catalog.h); thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/discover/source_catalog.h"

namespace tidemark {

// Append: a table without a key whose cursor only INSERT sets, each row
// inserted once. Snapshot covers tables with and without a key (then
// `key` is empty).
enum class DiscoveredMode { Incremental, Snapshot, Append, LeftOut };

struct DiscoveredTable {
  QualifiedName source;
  std::string name;  // the table's name in its pipeline
  DiscoveredMode mode = DiscoveredMode::LeftOut;
  std::vector<std::string> key;  // empty for a table without one
  // "primary key actor_pkey", or why the table has no key.
  std::string key_reason;
  std::string cursor;        // incremental and append only
  bool insert_only = false;  // a cursor that only new rows move: updates are not seen
  std::string lookback;      // a duration, or empty: none
  std::string reconcile;     // deletes.reconcile's cron, or empty: none
  // Why the cursor (incremental, append), why no cursor (snapshot), or
  // why the table is left out.
  std::string reason;
  std::vector<std::string> notes;  // what else the reader should check
};

struct DiscoverPolicy {
  // Above this many estimated rows, a table no trigger stamps on UPDATE
  // gets the best cursor it has and a daily reconcile instead of mode:
  // snapshot (`--snapshot-limit`).
  std::int64_t snapshot_limit = 10000000;
  // The connection the pipeline writes to and the one the daemon keeps
  // its state in. A table without a key is written as mode: append only
  // when they are one: such a table commits its rows and its watermark in
  // one transaction, and the configuration refuses it otherwise. Two
  // empty names are one.
  std::string target{};
  std::string state{};
};

// Decides one table. Its name in the pipeline is the source table's. A
// column a trigger stamps on every UPDATE is the cursor; else the table is
// a snapshot table (exact, and a run costs what changed), unless it is
// larger than the policy's limit and has a cursor to offer. A table
// without a key is a mode: append table when it has an insert-only cursor
// (an identity or sequence, else a time column its default stamps and no
// trigger stamps on UPDATE) and the target holds the state; else a
// snapshot without key up to the policy's limit; else it is left out.
DiscoveredTable discover_table(const CatalogTable& table, const DiscoverPolicy& policy = {});

// The columns of `table` that trigger `trigger` stamps with the clock on
// the events it fires for: by the function's source (`NEW.col := now()`
// and the like, as a statement of its own) or as contrib's moddatetime
// argument. Nothing for functions whose source says nothing (C, internal).
std::vector<std::string> columns_stamped_by(const CatalogTrigger& trigger, const CatalogTable& table);

// True when a default (or an assignment's right side) reads the clock:
// now(), CURRENT_TIMESTAMP, clock_timestamp() and the like.
bool reads_the_clock(const std::string& expression);

struct PipelineRequest {
  std::string pipeline;       // the pipeline's name
  std::string source;         // connection names
  std::string target;
  std::string source_schema;  // the schema the tables are from
  std::string target_schema;  // where they load to
  std::string schedule = "*/15 * * * *";
};

// A pipeline name made of `source` and `schema`, fit for `pipeline:`
// (letters, digits, _ . -, at most 63 characters).
std::string pipeline_name(const std::string& source, const std::string& schema);

// The pipeline file for `tables` (all of one source schema): every table
// loadable, each choice in a comment beside it, the tables left out listed
// at the end with their reasons; create_target on, so that an empty target
// database takes it as written. Table names are made unique in it.
std::string render_pipeline(const PipelineRequest& request, std::vector<DiscoveredTable> tables);

struct DiscoveryCounts {
  int found = 0;
  int incremental = 0;
  int insert_only = 0;  // of the incremental ones
  int append = 0;
  int snapshot = 0;
  int left_out = 0;

  int loadable() const { return incremental + append + snapshot; }
  DiscoveryCounts& operator+=(const DiscoveryCounts& other);
};
DiscoveryCounts count_discovered(const std::vector<DiscoveredTable>& tables);

}  // namespace tidemark
