// The schema drift decision, table-driven: each row is a source, a stored
// snapshot (or none), a target and a configuration, with the drift, the
// columns to append and the failure the rules in core/run/schema_drift.h
// give for them, worked out by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/run/schema_drift.h"

namespace tidemark {
namespace {

using Columns = std::vector<ColumnShape>;

const Columns kOrders{{"order_id", "bigint"}, {"status", "text"}, {"amount", "numeric(12,2)"},
                      {"updated_at", "timestamp with time zone"}};

Columns with(Columns columns, const ColumnShape& extra) {
  columns.push_back(extra);
  return columns;
}

Columns without(Columns columns, const std::string& name) {
  columns.erase(std::remove_if(columns.begin(), columns.end(), [&](const ColumnShape& c) { return c.name == name; }),
                columns.end());
  return columns;
}

Columns retyped(Columns columns, const std::string& name, const std::string& type) {
  for (ColumnShape& c : columns) {
    if (c.name == name) c.type = type;
  }
  return columns;
}

struct Row {
  const char* name;
  Columns source;
  std::optional<Columns> loaded;
  Columns target;
  std::vector<std::string> configured;
  SchemaChangePolicy policy;
  // Expected:
  std::string drift;  // SchemaDrift::describe()
  std::vector<std::string> append;
  std::string failure;  // empty: the run goes on
  bool snapshot_changed;
  bool first_load = false;  // no watermark stored yet
};

const SchemaChangePolicy kFail = SchemaChangePolicy::Fail;
const SchemaChangePolicy kAppend = SchemaChangePolicy::AppendNewColumns;
const std::vector<std::string> kListed{"order_id", "status", "updated_at"};

}  // namespace

TEST_CASE("schema drift: what is drift, what is appended, what fails") {
  const ColumnShape note{"note", "text"};
  const std::vector<Row> rows{
      {"nothing changed", kOrders, kOrders, kOrders, {}, kFail, "", {}, "", false},
      {"first run: no snapshot, the target has every source column", kOrders, std::nullopt, kOrders, {}, kFail, "", {},
       "", true},
      {"first run: the target's own types and extra columns are not drift", kOrders, std::nullopt,
       with(retyped(kOrders, "amount", "numeric"), {"loaded_at", "timestamp with time zone"}), {}, kFail, "", {}, "",
       true},
      {"first run: a source column the target lacks is added", with(kOrders, note), std::nullopt, kOrders, {}, kFail,
       "added column note text", {}, "schema drift in public.orders: added column note text", false},
      {"first load: a source column the target lacks is a target made wrong, not drift", with(kOrders, note),
       std::nullopt, kOrders, {}, kFail, "", {}, "target table raw.orders has no column note", false, true},
      {"first load with append_new_columns: the missing column is added", with(kOrders, note), std::nullopt, kOrders,
       {}, kAppend, "", {"note"}, "", true, true},
      {"added column, fail", with(kOrders, note), kOrders, kOrders, {}, kFail, "added column note text", {},
       "schema drift in public.orders: added column note text", false},
      {"added column, append_new_columns", with(kOrders, note), kOrders, kOrders, {}, kAppend, "", {"note"}, "", true},
      {"added column the target already has (the operator added it): loaded, not drift", with(kOrders, note), kOrders,
       with(kOrders, note), {}, kFail, "", {}, "", true},
      {"dropped column, fail", without(kOrders, "status"), kOrders, kOrders, {}, kFail, "dropped column status", {},
       "schema drift in public.orders: dropped column status", false},
      {"dropped column, append_new_columns fails too", without(kOrders, "status"), kOrders, kOrders, {}, kAppend,
       "dropped column status", {},
       "schema drift in public.orders: dropped column status (on_schema_change: append_new_columns adds new columns "
       "only)",
       false},
      {"dropped column dropped from the target too: resolved", without(kOrders, "status"), kOrders,
       without(kOrders, "status"), {}, kFail, "", {}, "", true},
      {"retyped column", retyped(kOrders, "amount", "text"), kOrders, kOrders, {}, kFail,
       "retyped amount numeric(12,2) -> text", {}, "schema drift in public.orders: retyped amount numeric(12,2) -> text",
       false},
      {"retyped column, the target already of the new type: resolved", retyped(kOrders, "amount", "text"), kOrders,
       retyped(kOrders, "amount", "text"), {}, kFail, "", {}, "", true},
      {"all three, in the order added, dropped, retyped", with(retyped(without(kOrders, "status"), "amount", "text"), note),
       kOrders, kOrders, {}, kFail, "added column note text; dropped column status; retyped amount numeric(12,2) -> text",
       {}, "schema drift in public.orders: added column note text; dropped column status; retyped amount numeric(12,2) "
           "-> text",
       false},
      {"append_new_columns with a retype: nothing appended, the retype fails",
       with(retyped(kOrders, "amount", "text"), note), kOrders, kOrders, {}, kAppend,
       "retyped amount numeric(12,2) -> text", {},
       "schema drift in public.orders: retyped amount numeric(12,2) -> text (on_schema_change: append_new_columns adds "
       "new columns only)",
       false},
      {"listed columns: an added source column is not loaded, so not drift", with(kOrders, note),
       Columns{kOrders[0], kOrders[1], kOrders[3]}, kOrders, kListed, kFail, "", {}, "", false},
      {"listed columns: an unlisted column dropped is not drift", without(kOrders, "amount"), kOrders, kOrders, kListed,
       kFail, "", {}, "", true},
      {"listed columns: an unlisted column retyped is not drift", retyped(kOrders, "amount", "text"), kOrders, kOrders,
       kListed, kFail, "", {}, "", true},
      {"listed columns: a listed column dropped is drift", without(kOrders, "status"), kOrders, kOrders, kListed, kFail,
       "dropped column status", {}, "schema drift in public.orders: dropped column status", false},
      {"listed columns: a listed column retyped is drift", retyped(kOrders, "status", "character varying(20)"), kOrders,
       kOrders, kListed, kFail, "retyped status text -> character varying(20)", {},
       "schema drift in public.orders: retyped status text -> character varying(20)", false},
      {"listed columns, no snapshot: a listed column the source lacks is a configuration error",
       without(kOrders, "status"), std::nullopt, kOrders, kListed, kFail, "", {},
       "source table public.orders has no column status", false},
      {"a loaded column the target lost (the source still has it)", kOrders, kOrders, without(kOrders, "amount"), {},
       kFail, "", {}, "target table raw.orders has no column amount", false},
      {"append_new_columns never appends a listed column the target lacks", kOrders, std::nullopt,
       without(kOrders, "status"), kListed, kAppend, "", {}, "target table raw.orders has no column status", false},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    SchemaDriftInput input;
    input.source_name = "public.orders";
    input.target_name = "raw.orders";
    input.source = row.source;
    input.loaded = row.loaded;
    input.target = row.target;
    input.configured = row.configured;
    input.policy = row.policy;
    input.first_load = row.first_load;
    const SchemaDecision d = decide_schema(input);
    CHECK(d.drift.describe() == row.drift);
    std::vector<std::string> append;
    for (const ColumnShape& c : d.append) append.push_back(c.name);
    CHECK(append == row.append);
    CHECK(d.failure.value_or("") == row.failure);
    if (row.failure.empty()) CHECK(d.snapshot_changed == row.snapshot_changed);
  }
}

TEST_CASE("schema drift: the load and the snapshot follow the source's order, or the listed columns") {
  SchemaDriftInput input;
  input.source_name = "public.orders";
  input.target_name = "raw.orders";
  input.source = with(kOrders, {"note", "text"});
  input.loaded = kOrders;
  input.target = kOrders;
  input.policy = SchemaChangePolicy::AppendNewColumns;
  SchemaDecision d = decide_schema(input);
  CHECK(d.load == std::vector<std::string>{"order_id", "status", "amount", "updated_at", "note"});
  CHECK(d.snapshot == input.source);
  REQUIRE(d.append.size() == 1);
  CHECK(d.append[0] == ColumnShape{"note", "text"});  // the source's type

  input.configured = {"updated_at", "order_id", "status"};
  d = decide_schema(input);
  CHECK(d.load == input.configured);
  CHECK(d.snapshot == Columns{kOrders[3], kOrders[0], kOrders[1]});
  CHECK(d.append.empty());
}

TEST_CASE("changed while read: only the copied columns' types count, and each change is named") {
  struct Row {
    const char* what;
    std::vector<std::string> copied;
    Columns read;
    std::string changes;  // empty: nothing changed
  };
  const Columns retyped = {kOrders[0], kOrders[1], {"amount", "text"}, kOrders[3]};
  const Columns without_status = {kOrders[0], kOrders[2], kOrders[3]};
  const Row rows[] = {
      {"the same", {"order_id", "status", "amount", "updated_at"}, kOrders, ""},
      {"a column added (not copied)", {"order_id", "status"}, with(kOrders, {"note", "text"}), ""},
      {"a copied column retyped", {"order_id", "amount"}, retyped, "amount numeric(12,2) -> text"},
      {"an uncopied column retyped", {"order_id", "status"}, retyped, ""},
      {"a copied column dropped", {"order_id", "status", "amount"}, without_status, "status text -> missing"},
  };
  for (const Row& row : rows) {
    CAPTURE(std::string(row.what));
    const auto changed = changed_while_read("public.orders", row.copied, kOrders, row.read);
    if (row.changes.empty()) {
      CHECK_FALSE(changed);
    } else {
      REQUIRE(changed);
      CHECK(*changed == "source table public.orders changed while the chunk read it (" + row.changes +
                            "); nothing committed, and the next run compares its columns again");
    }
  }
}

TEST_CASE("regression: a column the target generates was copied, and every load failed; it is left out, or refused when listed") {
  // A GENERATED ALWAYS AS (...) STORED column in both source and target.
  ColumnShape total{"total", "numeric(12,2)"};
  ColumnShape generated = total;
  generated.fill = ColumnFill::Generated;
  SchemaDriftInput input;
  input.source_name = "public.orders";
  input.target_name = "raw.orders";
  input.source = with(kOrders, total);
  input.target = with(kOrders, generated);
  input.first_load = true;
  SchemaDecision d = decide_schema(input);
  CHECK_FALSE(d.failure);
  CHECK(d.load == std::vector<std::string>{"order_id", "status", "amount", "updated_at"});
  CHECK(d.generated_by_target == std::vector<std::string>{"total"});
  CHECK(d.snapshot == kOrders);
  CHECK(d.drift.empty());
  // Loaded before without it, it is no new column either.
  input.loaded = kOrders;
  input.first_load = false;
  d = decide_schema(input);
  CHECK_FALSE(d.failure);
  CHECK(d.drift.empty());

  input.configured = {"order_id", "updated_at", "total"};
  d = decide_schema(input);
  REQUIRE(d.failure);
  CHECK(*d.failure == "target table raw.orders generates column total itself (GENERATED ALWAYS AS ... STORED), so "
                      "it cannot take the source's values: take total out of columns: (a key column the target "
                      "generates: make it a plain column there)");
}

}  // namespace tidemark
