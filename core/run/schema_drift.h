// Schema drift (docs/drift-and-deletes.md): whether the source's columns
// still match what an incremental table loads, and what its run does
// about it before anything is written. Pure: it is given the source's and
// the target's columns as their catalogs list them, the columns the table
// last loaded (its stored snapshot) and the table's configuration, and
// returns a decision; it reads nothing itself. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/sql/column_shape.h"

namespace tidemark {

struct ColumnRetype {
  std::string name;
  std::string from;  // the type the table loaded
  std::string to;    // the source's type now
};

// The changes that stop a run.
struct SchemaDrift {
  std::vector<ColumnShape> added;     // new in the source; the target cannot take it
  std::vector<std::string> dropped;   // loaded before, gone from the source, still in the target
  std::vector<ColumnRetype> retyped;  // loaded before with another type; the target is not of the new one

  bool empty() const { return added.empty() && dropped.empty() && retyped.empty(); }
  // "added column note text; dropped column status; retyped amount
  // numeric(12,2) -> text", in that order; empty when there is none.
  std::string describe() const;
};

struct SchemaDriftInput {
  std::string source_name;  // for messages: public.orders
  std::string target_name;  // raw.orders
  std::vector<ColumnShape> source;  // every source column, in order
  // The snapshot stored by the table's last successful load: the columns
  // it loaded with their source types. Nothing before the first one (a
  // new table, or a state schema older than version 5): the target is all
  // there is to compare with.
  std::optional<std::vector<ColumnShape>> loaded;
  std::vector<ColumnShape> target;  // every target column
  std::vector<std::string> configured;  // `columns:`; empty: every source column
  SchemaChangePolicy policy = SchemaChangePolicy::Fail;
  // No watermark is stored yet: nothing was ever loaded, so nothing can
  // have drifted; a target that lacks a source column is made wrong.
  bool first_load = false;
};

struct SchemaDecision {
  // What stops the run (nothing is written, the watermark stays); empty
  // when it goes on.
  SchemaDrift drift;
  // Why the run stops before writing: the drift, or a column that the
  // configuration names and the source lacks, or that the target lacks.
  // Always a permanent error. Nothing when the run goes on.
  std::optional<std::string> failure;
  // append_new_columns: the source's new columns, to be added to the
  // target (nullable, the source's type) in the first chunk's transaction;
  // empty when the run stops.
  std::vector<ColumnShape> append;
  // The columns a chunk copies: the configured ones as listed, else every
  // source column in the source's order but those the target computes.
  std::vector<std::string> load;
  // Source columns left out of `load` because the target generates them
  // (GENERATED ALWAYS AS ... STORED): the target's values, not the source's.
  std::vector<std::string> generated_by_target;
  // What a successful load stores as the table's snapshot: `load` with the
  // source's types.
  std::vector<ColumnShape> snapshot;
  // Whether `snapshot` differs from the stored one (or none is stored), so
  // that a load writes it only then.
  bool snapshot_changed = false;
};

// The rules, in the operator's words:
// - With a snapshot, a source column it lacks is *added* (unless the
//   target already has a column of that name: it is loaded from now on);
//   a column it has that the source lost is *dropped* (unless the target
//   lost it too); one whose source type changed is *retyped* (unless the
//   target's column already has the new type).
// - Without one, only the target is known: a source column the target
//   lacks is added (unless nothing was loaded yet: then the target is
//   missing a column, which append_new_columns adds like a new one).
//   Target columns that no source column matches, and
//   types that differ (text for varchar, bigint for int), are how a
//   target may well be made, so they are not drift.
// - With `columns:` listed, only those columns count: added source columns
//   are not loaded, so they cannot drift.
// - append_new_columns turns every added column into one to append;
//   dropped and retyped ones still stop the run.
// - A column the target generates is the target's to compute: it is left
//   out of the load, and refused when `columns:` lists it.
SchemaDecision decide_schema(const SchemaDriftInput& input);

// Whether the columns a chunk copied (`copied`) had, when its rows were
// read, the types the run inspected before (`inspected`, the catalog its
// plan and COPY format were made from): a column retyped, dropped or
// dropped and added again in between would load rows the plan did not
// mean (a binary value read as another type). Nothing when they match;
// else what changed, naming the table (`source_name`), for the error that
// keeps the chunk from committing.
std::optional<std::string> changed_while_read(const std::string& source_name, const std::vector<std::string>& copied,
                                              const std::vector<ColumnShape>& inspected,
                                              const std::vector<ColumnShape>& read);

}  // namespace tidemark
