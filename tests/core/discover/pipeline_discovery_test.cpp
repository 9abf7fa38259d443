// discover's decisions from catalog facts, table by table: which key,
// which cursor and on what evidence, snapshot, append for a table without
// a key, or left out and why; and that the pipeline file it writes is one
// the configuration parser accepts as it is.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/config/config_parser.h"
#include "core/discover/pipeline_discovery.h"

namespace tidemark {
namespace {

UniqueIndex primary_key(std::vector<std::string> columns) {
  UniqueIndex i;
  i.name = "t_pkey";
  i.primary = true;
  i.columns = std::move(columns);
  return i;
}

CatalogColumn column(std::string name, std::string type, bool not_null = true, std::string default_expression = "") {
  CatalogColumn c;
  c.name = std::move(name);
  c.type = std::move(type);
  c.not_null = not_null;
  c.default_expression = std::move(default_expression);
  return c;
}

CatalogTrigger plpgsql_trigger(std::string body, bool on_insert = false, bool on_update = true) {
  CatalogTrigger t;
  t.name = "stamp";
  t.function = "public.stamp";
  t.language = "plpgsql";
  t.source = std::move(body);
  t.before = true;
  t.for_each_row = true;
  t.on_insert = on_insert;
  t.on_update = on_update;
  return t;
}

// A table t(id bigint primary key, updated_at timestamptz default now()) with `triggers`.
CatalogTable table_with(std::vector<CatalogTrigger> triggers) {
  CatalogTable t;
  t.name = QualifiedName("public", "t");
  t.columns = {column("id", "bigint"), column("updated_at", "timestamp with time zone", true, "now()")};
  t.unique_indexes = {primary_key({"id"})};
  t.triggers = std::move(triggers);
  return t;
}

// A discovered file as the daemon reads it, beside a daemon file whose
// state is the target connection (warehouse).
ParseOutcome<Config> parse_discovered(const std::string& file, const std::string& yaml) {
  const auto daemon = parse_daemon_config({"tidemark.yaml", R"(state: warehouse
connections:
  shop: { dsn: "dbname=shop" }
  warehouse: { dsn: "dbname=warehouse" }
)"});
  REQUIRE(daemon.errors.empty());
  auto parsed = parse_config(*daemon.value, {{file, yaml}});
  for (const ConfigError& e : parsed.errors) MESSAGE(e.to_string());
  return parsed;
}

}  // namespace

TEST_CASE("discover: which trigger bodies stamp updated_at with the clock") {
  struct Case {
    const char* what;
    const char* body;
    bool stamps;
  };
  const Case cases[] = {
      {"an assignment after BEGIN", "BEGIN NEW.updated_at = now(); RETURN NEW; END", true},
      {"PL/pgSQL's :=, upper case", "BEGIN\n  NEW.UPDATED_AT := CURRENT_TIMESTAMP;\n  RETURN NEW;\nEND", true},
      {"clock_timestamp()", "begin new.updated_at := clock_timestamp(); return new; end", true},
      {"the column quoted", "BEGIN NEW.\"updated_at\" = statement_timestamp(); RETURN NEW; END", true},
      {"after THEN, behind a comparison",
       "BEGIN IF NEW.updated_at = OLD.updated_at THEN NEW.updated_at := now(); END IF; RETURN NEW; END", true},
      {"a comparison only", "BEGIN IF NEW.updated_at = now() THEN RETURN NULL; END IF; RETURN NEW; END", false},
      {"a value that is not the clock", "BEGIN NEW.updated_at := OLD.updated_at; RETURN NEW; END", false},
      {"another column", "BEGIN NEW.updated_by := now(); RETURN NEW; END", false},
      {"a longer name that starts alike", "BEGIN NEW.updated_at_utc := now(); RETURN NEW; END", false},
      {"renew is not NEW", "BEGIN renew.updated_at := now(); RETURN NEW; END", false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const CatalogTable t = table_with({plpgsql_trigger(c.body)});
    const auto stamped = columns_stamped_by(t.triggers[0], t);
    CHECK((stamped == std::vector<std::string>{"updated_at"}) == c.stamps);
  }
}

TEST_CASE("discover: a trigger that is AFTER, per statement, or C without moddatetime stamps nothing") {
  CatalogTable t = table_with({});
  CatalogTrigger after = plpgsql_trigger("BEGIN NEW.updated_at = now(); RETURN NEW; END");
  after.before = false;
  CHECK(columns_stamped_by(after, t).empty());
  CatalogTrigger statement = plpgsql_trigger("BEGIN NEW.updated_at = now(); RETURN NEW; END");
  statement.for_each_row = false;
  CHECK(columns_stamped_by(statement, t).empty());
  CatalogTrigger moddatetime = plpgsql_trigger("moddatetime");
  moddatetime.language = "c";
  moddatetime.arguments = {"updated_at"};
  CHECK(columns_stamped_by(moddatetime, t) == std::vector<std::string>{"updated_at"});
  moddatetime.source = "some_other_c_function";
  CHECK(columns_stamped_by(moddatetime, t).empty());
}

TEST_CASE("discover: a column stamped on UPDATE by a trigger is the cursor, with its evidence") {
  const DiscoveredTable d = discover_table(table_with({plpgsql_trigger("BEGIN NEW.updated_at := now(); RETURN NEW; END")}));
  CHECK(d.mode == DiscoveredMode::Incremental);
  CHECK(d.cursor == "updated_at");
  CHECK_FALSE(d.insert_only);
  CHECK(d.key == std::vector<std::string>{"id"});
  CHECK(d.key_reason == "primary key t_pkey");
  CHECK(d.reason == "updated_at is stamped on every UPDATE by trigger stamp, on INSERT by its default now()");
  // What no cursor sees, a deleted row, the daily reconcile removes.
  CHECK(d.reconcile == "0 3 * * *");
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].find("a cursor cannot see a deleted row") == 0);
}

TEST_CASE("discover: a stamped column nothing sets on INSERT is chosen with a note") {
  CatalogTable t = table_with({plpgsql_trigger("BEGIN NEW.updated_at := now(); RETURN NEW; END")});
  t.columns[1].default_expression.clear();
  const DiscoveredTable d = discover_table(t);
  CHECK(d.cursor == "updated_at");
  REQUIRE(d.notes.size() == 2);
  CHECK(d.notes[0].find("nothing stamps updated_at on INSERT") == 0);
}

TEST_CASE("regression: a table without a trigger-stamped column was given its identity, blind to updates") {
  // The most common schema an application makes: an identity key, an
  // updated_at the application sets. Its identity as the cursor lost
  // every update; the exact default is a snapshot, which costs what changed.
  CatalogTable t = table_with({});
  t.columns[0].fill = ColumnFill::IdentityAlways;
  t.estimated_rows = 5000;
  const DiscoveredTable d = discover_table(t);
  CHECK(d.mode == DiscoveredMode::Snapshot);
  CHECK(d.cursor.empty());
  CHECK_FALSE(d.insert_only);
  CHECK(d.reason.find("only a snapshot is exact") != std::string::npos);
  // The cheaper choices and their risks, in the reader's words.
  REQUIRE(d.notes.size() == 2);
  CHECK(d.notes[0].find("exact only if every writer sets it on every change: cursor: updated_at with a lookback") !=
        std::string::npos);
  CHECK(d.notes[1].find("id comes from an identity: as a cursor it sees new rows only") == 0);
}

TEST_CASE("discover: above --snapshot-limit, the best cursor with a daily reconcile, saying what it misses") {
  struct Case {
    const char* name;
    bool app_stamp;  // the table has updated_at (set by no trigger)
    bool identity;
    DiscoveredMode mode;
    const char* cursor;
    bool insert_only;
    const char* lookback;
  };
  const Case cases[] = {
      {"an application-stamped change column is preferred over an identity", true, true, DiscoveredMode::Incremental,
       "updated_at", false, "1h"},
      {"an identity alone is an insert-only cursor", false, true, DiscoveredMode::Incremental, "id", true, ""},
      {"no column to serve: a snapshot all the same", false, false, DiscoveredMode::Snapshot, "", false, ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CatalogTable t = table_with({});
    if (!c.app_stamp) t.columns.pop_back();
    if (c.identity) t.columns[0].fill = ColumnFill::IdentityByDefault;
    t.estimated_rows = 20000000;
    const DiscoveredTable d = discover_table(t, DiscoverPolicy{10000000});
    CHECK(d.mode == c.mode);
    CHECK(d.cursor == c.cursor);
    CHECK(d.insert_only == c.insert_only);
    CHECK(d.lookback == c.lookback);
    if (c.mode == DiscoveredMode::Incremental) {
      CHECK(d.reconcile == "0 3 * * *");
      CHECK(d.reason.find("about 20000000 rows, above --snapshot-limit (10000000)") != std::string::npos);
    } else {
      CHECK(d.reconcile.empty());
      REQUIRE_FALSE(d.notes.empty());
      CHECK(d.notes.back() == "about 20000000 rows, above --snapshot-limit, but no column could serve as a cursor");
    }
    // At the limit or below, every one of them is a snapshot table.
    t.estimated_rows = 10000000;
    CHECK(discover_table(t, DiscoverPolicy{10000000}).mode == DiscoveredMode::Snapshot);
  }
  CatalogTable sequenced = table_with({});
  sequenced.columns.pop_back();
  sequenced.columns[0].default_expression = "nextval('t_id_seq'::regclass)";
  sequenced.estimated_rows = 20000000;
  const DiscoveredTable d = discover_table(sequenced, DiscoverPolicy{10000000});
  CHECK(d.cursor == "id");
  CHECK(d.reason.find("a sequence (nextval('t_id_seq'::regclass))") != std::string::npos);
}

TEST_CASE("discover: a table with a key and no cursor is a snapshot table") {
  CatalogTable t;
  t.name = QualifiedName("public", "countries");
  t.columns = {column("code", "text"), column("name", "text")};
  t.unique_indexes = {primary_key({"code"})};
  const DiscoveredTable d = discover_table(t);
  CHECK(d.mode == DiscoveredMode::Snapshot);
  CHECK(d.cursor.empty());
  CHECK(d.reason.find("no trigger stamps a column on UPDATE, so only a snapshot is exact") == 0);
  CHECK(d.notes.empty());
}

TEST_CASE("discover: the key is the primary key, else a unique index on NOT NULL columns, else none") {
  CatalogTable t;
  t.name = QualifiedName("public", "t");
  t.columns = {column("a", "text"), column("b", "text", false), column("c", "text")};
  UniqueIndex on_nullable;
  on_nullable.name = "t_b_key";
  on_nullable.columns = {"b"};
  UniqueIndex wide;
  wide.name = "t_a_c_key";
  wide.columns = {"a", "c"};
  UniqueIndex narrow;
  narrow.name = "t_c_key";
  narrow.columns = {"c"};
  UniqueIndex partial = narrow;
  partial.name = "t_a_partial";
  partial.columns = {"a"};
  partial.partial = true;

  t.unique_indexes = {on_nullable, wide, narrow, partial};
  DiscoveredTable d = discover_table(t);
  CHECK(d.key == std::vector<std::string>{"c"});
  CHECK(d.key_reason == "unique index t_c_key on NOT NULL columns (no primary key)");

  t.unique_indexes = {on_nullable, partial};
  d = discover_table(t);
  CHECK(d.mode == DiscoveredMode::Snapshot);
  CHECK(d.key.empty());
  CHECK(d.key_reason ==
        "no primary key and no unique index on NOT NULL columns, so nothing tells its rows apart (unique index t_b_key "
        "allows NULL, which may repeat)");
}

TEST_CASE("regression: a table whose name holds a newline is left out, not written into a comment and a name") {
  CatalogTable t = table_with({});
  t.name = QualifiedName("public", "bad\nname: x");
  const DiscoveredTable d = discover_table(t);
  CHECK(d.mode == DiscoveredMode::LeftOut);
  PipelineRequest request{"shop_public", "shop", "warehouse", "public", "public"};
  const std::string yaml = render_pipeline(request, {d, discover_table(table_with({}))});
  CHECK(yaml.find("bad\nname") == std::string::npos);
  CHECK(yaml.find("#   public.\"bad?name: x\": its name holds a control character") != std::string::npos);
}

TEST_CASE("discover: the pipeline file it writes parses as written, names made unique") {
  CatalogTable odd = table_with({plpgsql_trigger("BEGIN NEW.updated_at := now(); RETURN NEW; END")});
  odd.name = QualifiedName("Sales", "Order Lines");
  odd.columns[0].name = "Line Id";
  odd.unique_indexes = {primary_key({"Line Id"})};
  CatalogTable twin = table_with({});
  twin.name = QualifiedName("Sales", "Order_Lines");
  CatalogTable snapshot;
  snapshot.name = QualifiedName("Sales", "yes");
  snapshot.columns = {column("code", "text")};
  snapshot.unique_indexes = {primary_key({"code"})};
  CatalogTable big = table_with({});
  big.name = QualifiedName("Sales", "big");
  big.estimated_rows = 20000000;
  CatalogTable keyless;  // too large for a snapshot without key, and no cursor to append by
  keyless.name = QualifiedName("Sales", "log");
  keyless.columns = {column("line", "text")};
  keyless.estimated_rows = 20000000;

  PipelineRequest request{pipeline_name("shop", "Sales"), "shop", "warehouse", "Sales", "raw"};
  CHECK(request.pipeline == "shop_Sales");
  const std::vector<DiscoveredTable> found = {discover_table(odd), discover_table(twin), discover_table(snapshot),
                                              discover_table(keyless, DiscoverPolicy{10000000}),
                                              discover_table(big, DiscoverPolicy{10000000})};
  const std::string yaml = render_pipeline(request, found);
  const DiscoveryCounts counts = count_discovered(found);
  CHECK(counts.found == 5);
  CHECK(counts.incremental == 2);
  CHECK(counts.snapshot == 2);
  CHECK(counts.left_out == 1);

  const auto parsed = parse_discovered("shop_Sales.yaml", yaml);
  REQUIRE_MESSAGE(parsed.errors.empty(), yaml);
  const PipelineConfig& p = parsed.value->pipelines.at(0);
  CHECK(p.name == "shop_Sales");
  CHECK(p.create_target);
  REQUIRE(p.tables.size() == 4);
  const TableConfig& lines = p.tables[0];
  CHECK(lines.name == "Order_Lines");
  CHECK(lines.source_table->display() == "\"Sales\".\"Order Lines\"");
  CHECK(lines.target_table.display() == "raw.\"Order Lines\"");
  CHECK(lines.key == std::vector<std::string>{"Line Id"});
  CHECK(lines.cursor == "updated_at");
  CHECK(p.tables[1].name == "Order_Lines_2");  // "Order_Lines", made unique
  CHECK(p.tables[1].cursor.empty());
  CHECK(p.tables[1].mode == TableMode::Snapshot);
  const TableConfig& large = p.tables[2];
  CHECK(large.name == "big");
  CHECK(large.cursor == "updated_at");
  CHECK(large.lookback.amount == 3600);
  REQUIRE(large.deletes.has_value());
  CHECK(p.tables[3].name == "yes");  // quoted in YAML, not read as true
  CHECK(p.tables[3].mode == TableMode::Snapshot);
  CHECK(yaml.find("# Left out:\n#   \"Sales\".log: no primary key") != std::string::npos);
}

namespace {

CatalogColumn filled(CatalogColumn c, ColumnFill fill) {
  c.fill = fill;
  return c;
}

// public.events without a key: `columns` and a payload, with `triggers`.
CatalogTable keyless_with(std::vector<CatalogColumn> columns, std::vector<CatalogTrigger> triggers = {}) {
  CatalogTable t;
  t.name = QualifiedName("public", "events");
  t.columns = std::move(columns);
  t.columns.push_back(column("payload", "text", false));
  t.triggers = std::move(triggers);
  return t;
}

const char* const kStampCreatedAt = "BEGIN NEW.created_at := now(); RETURN NEW; END";

}  // namespace

TEST_CASE("discover: a table without a key appends by its insert-only cursor, else is a snapshot without key") {
  CatalogTrigger unread;  // a C function's body says nothing of what it assigns
  unread.name = "audit_stamp";
  unread.language = "c";
  unread.source = "audit_stamp";
  unread.before = true;
  unread.for_each_row = true;
  unread.on_update = true;
  const CatalogColumn created_at = column("created_at", "timestamp with time zone", true, "now()");
  struct Case {
    const char* what;
    CatalogTable table;
    DiscoveredMode mode;
    const char* cursor;
    const char* reason;  // where the reason starts
  };
  const Case cases[] = {
      {"an identity", keyless_with({filled(column("id", "bigint"), ColumnFill::IdentityAlways)}),
       DiscoveredMode::Append, "id",
       "id comes from an identity, which numbers new rows (GENERATED ALWAYS: an INSERT cannot give it a value of its "
       "own); each run inserts the rows past the watermark once"},
      {"a sequence's default", keyless_with({column("id", "integer", true, "nextval('events_id_seq'::regclass)")}),
       DiscoveredMode::Append, "id", "id comes from a sequence (nextval('events_id_seq'::regclass)), which numbers"},
      {"a timestamp its default stamps, no trigger", keyless_with({created_at}), DiscoveredMode::Append,
       "created_at", "created_at is stamped on INSERT by its default now(), and no trigger stamps it on UPDATE"},
      {"timestamp without time zone, CURRENT_TIMESTAMP",
       keyless_with({column("logged", "timestamp without time zone", true, "CURRENT_TIMESTAMP")}),
       DiscoveredMode::Append, "logged", "logged is stamped on INSERT by its default CURRENT_TIMESTAMP"},
      {"a timestamp a BEFORE INSERT trigger stamps",
       keyless_with({column("created_at", "timestamp with time zone")},
                    {plpgsql_trigger(kStampCreatedAt, /*on_insert=*/true, /*on_update=*/false)}),
       DiscoveredMode::Append, "created_at", "created_at is stamped on INSERT by trigger stamp, and no trigger"},
      {"an identity before a clock default",
       keyless_with({created_at, filled(column("id", "bigint"), ColumnFill::IdentityByDefault)}),
       DiscoveredMode::Append, "id", "id comes from an identity, which numbers new rows; each run"},
      {"a trigger also stamps it on UPDATE: an updated_at, not insert-only",
       keyless_with({created_at}, {plpgsql_trigger(kStampCreatedAt, true, true)}), DiscoveredMode::Snapshot, "",
       "no insert-only cursor for mode: append"},
      {"a trigger whose body cannot be read may stamp it on UPDATE", keyless_with({created_at}, {unread}),
       DiscoveredMode::Snapshot, "", "no insert-only cursor for mode: append"},
      {"a date is not fine enough", keyless_with({column("day", "date", true, "CURRENT_DATE")}),
       DiscoveredMode::Snapshot, "", "no insert-only cursor for mode: append"},
      {"a timestamp without a clock default", keyless_with({column("at", "timestamp with time zone")}),
       DiscoveredMode::Snapshot, "", "no insert-only cursor for mode: append"},
      {"an integer no sequence numbers", keyless_with({column("n", "bigint")}), DiscoveredMode::Snapshot, "",
       "no insert-only cursor for mode: append"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const DiscoveredTable d = discover_table(c.table);
    CHECK(d.mode == c.mode);
    CHECK(d.key.empty());
    CHECK(d.key_reason == "no primary key and no unique index on NOT NULL columns, so nothing tells its rows apart");
    CHECK(d.cursor == c.cursor);
    CHECK(d.lookback.empty());
    CHECK(d.reconcile.empty());
    CHECK_MESSAGE(d.reason.find(c.reason) == 0, d.reason);
    if (c.mode == DiscoveredMode::Append) {
      CHECK(d.insert_only);
      // The risks, in the reader's words.
      REQUIRE(d.notes.size() >= 3);
      CHECK(d.notes[0].find("updates and deletes of its rows are not loaded: the runs count them as unseen changes "
                            "(tidemark_unseen_changes)") == 0);
      CHECK(d.notes[1] == "it needs the state in the target's database (state: the target connection)");
    } else {
      CHECK(d.reason.find("no key: identical rows are counted, and a changed row is deleted and inserted again") !=
            std::string::npos);
    }
  }
}

TEST_CASE("discover: an append cursor's risks are noted: an INSERT's own values, NULL, a column stamped on UPDATE") {
  // A clock default is the application's to override.
  DiscoveredTable d = discover_table(keyless_with({column("created_at", "timestamp with time zone", false, "now()")}));
  REQUIRE(d.mode == DiscoveredMode::Append);
  CHECK(std::count(d.notes.begin(), d.notes.end(),
                   "an INSERT that gives created_at a value of its own (an application's clock, a backdated row) below "
                   "the watermark is never loaded") == 1);
  CHECK(std::count(d.notes.begin(), d.notes.end(),
                   "created_at allows NULL: a row inserted with NULL in it is never loaded") == 1);
  // So is an identity BY DEFAULT's; an identity ALWAYS refuses it.
  d = discover_table(keyless_with({filled(column("id", "bigint"), ColumnFill::IdentityByDefault)}));
  CHECK(std::count(d.notes.begin(), d.notes.end(),
                   "an INSERT that gives id a value of its own below the watermark is never loaded") == 1);
  d = discover_table(keyless_with({filled(column("id", "bigint"), ColumnFill::IdentityAlways)}));
  CHECK(std::none_of(d.notes.begin(), d.notes.end(),
                     [](const std::string& n) { return n.find("a value of its own") != std::string::npos; }));
  // A change stamp would be a cursor with a key to find the row it changed.
  d = discover_table(keyless_with({filled(column("id", "bigint"), ColumnFill::IdentityAlways),
                                   column("updated_at", "timestamp with time zone", true, "now()")},
                                  {plpgsql_trigger("BEGIN NEW.updated_at := now(); RETURN NEW; END")}));
  CHECK(d.cursor == "id");
  CHECK(d.notes.back() ==
        "updated_at is stamped on every UPDATE by trigger stamp: with a key it would be the cursor of an incremental "
        "table");
}

TEST_CASE("discover: a table without a key or an insert-only cursor above --snapshot-limit is left out, saying why") {
  CatalogTable t = keyless_with({column("n", "bigint")});
  t.estimated_rows = 20000000;
  DiscoveredTable d = discover_table(t, DiscoverPolicy{10000000});
  CHECK(d.mode == DiscoveredMode::LeftOut);
  CHECK(d.reason ==
        "no primary key and no unique index on NOT NULL columns, so nothing tells its rows apart; about 20000000 rows, "
        "above --snapshot-limit (10000000), where a snapshot without key would compare the whole table every run; and "
        "no insert-only cursor for mode: append (an identity, a sequence default, or a timestamp its default stamps "
        "and no trigger stamps on UPDATE); add a primary key or an identity column to load it");
  // At the limit, a snapshot without key.
  t.estimated_rows = 10000000;
  CHECK(discover_table(t, DiscoverPolicy{10000000}).mode == DiscoveredMode::Snapshot);

  // A partitioned table, whose primary key would have to hold its
  // partition columns, is judged alike.
  t.partitioned = true;
  t.estimated_rows = 20000000;
  d = discover_table(t, DiscoverPolicy{10000000});
  CHECK(d.mode == DiscoveredMode::LeftOut);
  CHECK(d.reason.find("add a primary key (on a partitioned table it holds the partition columns) or an identity "
                      "column to load it") != std::string::npos);
  t.columns[0].default_expression = "nextval('events_n_seq'::regclass)";
  d = discover_table(t, DiscoverPolicy{10000000});
  CHECK(d.mode == DiscoveredMode::Append);
  CHECK(d.cursor == "n");
}

TEST_CASE("discover: with the state outside the target, a table without a key is a snapshot, never append") {
  // The configuration refuses mode: append unless the target holds the
  // state: its rows and watermark commit in one transaction.
  DiscoverPolicy policy;
  policy.target = "warehouse";
  policy.state = "tidemark_state";
  CatalogTable t = keyless_with({filled(column("id", "bigint"), ColumnFill::IdentityAlways)});
  DiscoveredTable d = discover_table(t, policy);
  CHECK(d.mode == DiscoveredMode::Snapshot);
  CHECK(d.cursor.empty());
  CHECK(d.reason.find("id comes from an identity, which numbers new rows (GENERATED ALWAYS: an INSERT cannot give it "
                      "a value of its own), but mode: append commits its rows and its watermark in one transaction, "
                      "which needs the state in the target's database: this pipeline writes to connection warehouse "
                      "and the state lives in tidemark_state; so each run makes the target equal") == 0);
  t.estimated_rows = policy.snapshot_limit + 1;
  d = discover_table(t, policy);
  CHECK(d.mode == DiscoveredMode::LeftOut);
  const std::string ending = "an identity column to load it, or set state: warehouse to load it as mode: append";
  REQUIRE(d.reason.size() > ending.size());
  CHECK(d.reason.substr(d.reason.size() - ending.size()) == ending);
  // Where they are one, append.
  policy.state = "warehouse";
  CHECK(discover_table(t, policy).mode == DiscoveredMode::Append);
}

TEST_CASE("discover: append tables and snapshots without key are written as the configuration takes them") {
  DiscoverPolicy policy;
  policy.snapshot_limit = 10000000;
  policy.target = "warehouse";
  policy.state = "warehouse";
  CatalogTable by_id = keyless_with({filled(column("id", "bigint"), ColumnFill::IdentityAlways)});
  by_id.name = QualifiedName("app", "by_id");
  CatalogTable by_clock = keyless_with({column("created_at", "timestamp with time zone", true, "now()")});
  by_clock.name = QualifiedName("app", "by_clock");
  CatalogTable partitioned = keyless_with({column("id", "bigint", true, "nextval('app.parted_id_seq'::regclass)")});
  partitioned.name = QualifiedName("app", "parted");
  partitioned.partitioned = true;
  CatalogTable multiset = keyless_with({column("n", "bigint")});
  multiset.name = QualifiedName("app", "multiset");
  CatalogTable huge = keyless_with({column("n", "bigint")});
  huge.name = QualifiedName("app", "huge");
  huge.estimated_rows = 20000000;
  CatalogTable keyed = table_with({plpgsql_trigger("BEGIN NEW.updated_at := now(); RETURN NEW; END")});
  keyed.name = QualifiedName("app", "keyed");

  std::vector<DiscoveredTable> found;
  for (const CatalogTable* t : {&by_id, &by_clock, &partitioned, &multiset, &huge, &keyed}) {
    found.push_back(discover_table(*t, policy));
  }
  const DiscoveryCounts counts = count_discovered(found);
  CHECK(counts.found == 6);
  CHECK(counts.incremental == 1);
  CHECK(counts.insert_only == 0);
  CHECK(counts.append == 3);
  CHECK(counts.snapshot == 1);
  CHECK(counts.left_out == 1);
  CHECK(counts.loadable() == 5);

  const PipelineRequest request{pipeline_name("shop", "app"), "shop", "warehouse", "app", "raw"};
  const std::string yaml = render_pipeline(request, found);
  CHECK(yaml.find("  # app.by_id: no primary key and no unique index on NOT NULL columns, so nothing tells its rows\n"
                  "  #   apart.\n  # mode: append: id comes from an identity") != std::string::npos);
  CHECK(yaml.find("  # Note: it needs the state in the target's database (state: warehouse).\n") != std::string::npos);
  CHECK(yaml.find("  - name: by_id\n    mode: append\n    source_table: app.by_id\n    target_table: raw.by_id\n"
                  "    cursor: id\n\n") != std::string::npos);
  CHECK(yaml.find("  - name: multiset\n    mode: snapshot\n    source_table: app.multiset\n"
                  "    target_table: raw.multiset\n\n") != std::string::npos);
  CHECK(yaml.find("#   app.huge: no primary key") != std::string::npos);
  CHECK(yaml.find("6 tables, 1 incremental, 3 append,\n#   1 snapshot, 1 left out.") != std::string::npos);

  const auto parsed = parse_discovered("shop_app.yaml", yaml);
  REQUIRE_MESSAGE(parsed.errors.empty(), yaml);
  const PipelineConfig& p = parsed.value->pipelines.at(0);
  REQUIRE(p.tables.size() == 5);
  struct Expected {
    const char* name;
    TableMode mode;
    const char* cursor;
  };
  const Expected expected[] = {{"by_clock", TableMode::Append, "created_at"},
                               {"by_id", TableMode::Append, "id"},
                               {"keyed", TableMode::Incremental, "updated_at"},
                               {"multiset", TableMode::Snapshot, ""},
                               {"parted", TableMode::Append, "id"}};
  for (std::size_t i = 0; i < p.tables.size(); ++i) {
    const TableConfig& t = p.tables[i];
    CAPTURE(t.name);
    CHECK(t.name == expected[i].name);
    CHECK(t.mode == expected[i].mode);
    CHECK(t.cursor == expected[i].cursor);
    CHECK(t.key.empty() == (t.mode != TableMode::Incremental));
    CHECK(t.create_target);
    if (t.mode != TableMode::Incremental) {
      CHECK_FALSE(t.deletes.has_value());
      CHECK(t.lookback.amount == 0);
    }
  }

  // With the state elsewhere, the same tables are written as snapshots
  // (or left out), and the configuration takes them.
  const auto apart = parse_daemon_config({"tidemark.yaml", R"(state: tidemark_state
connections:
  shop: { dsn: "dbname=shop" }
  warehouse: { dsn: "dbname=warehouse" }
  tidemark_state: { dsn: "dbname=state" }
)"});
  REQUIRE(apart.errors.empty());
  policy.state = "tidemark_state";
  found.clear();
  for (const CatalogTable* t : {&by_id, &by_clock, &partitioned, &multiset, &huge, &keyed}) {
    found.push_back(discover_table(*t, policy));
  }
  CHECK(count_discovered(found).append == 0);
  CHECK(count_discovered(found).snapshot == 4);
  const std::string snapshots = render_pipeline(request, found);
  CHECK(snapshots.find("mode: append\n") == std::string::npos);
  const auto reparsed = parse_config(*apart.value, {{"shop_app.yaml", snapshots}});
  for (const ConfigError& e : reparsed.errors) CAPTURE(e.message);
  CHECK_MESSAGE(reparsed.errors.empty(), snapshots);
}

}  // namespace tidemark
