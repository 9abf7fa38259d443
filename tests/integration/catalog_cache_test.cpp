// The catalog cache's one promise: a relation's version changes with every
// change the catalog reads would report (so a kept answer is never used
// for a changed table), and only with such changes (so an unchanged
// table's runs keep theirs). Checked change by change on a real server.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "daemon/pg/data/relation_catalog.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const QualifiedName kTable("public", "versioned");

std::optional<std::string> version(PgConnection& on) { return relation_version(on, kTable); }

struct Change {
  const char* what;
  const char* before;  // run first, its change not counted
  const char* change;
};

}  // namespace

TEST_CASE("a relation's version changes with every change its catalog reads report") {
  const std::vector<Change> changes = {
      {"a column added", "", "alter table versioned add column extra int"},
      {"a column dropped", "", "alter table versioned drop column note"},
      {"a column renamed", "", "alter table versioned rename column note to remark"},
      {"a column's type", "", "alter table versioned alter column note type varchar(20)"},
      {"a column's typmod", "alter table versioned alter column amount type numeric(10,2)",
       "alter table versioned alter column amount type numeric(12,2)"},
      {"NOT NULL set", "", "alter table versioned alter column note set not null"},
      {"NOT NULL dropped", "", "alter table versioned alter column updated_at drop not null"},
      {"a default set", "", "alter table versioned alter column note set default 'x'"},
      {"a default changed", "alter table versioned alter column note set default 'x'",
       "alter table versioned alter column note set default 'y'"},
      {"a default dropped", "alter table versioned alter column note set default 'x'",
       "alter table versioned alter column note drop default"},
      {"an identity added", "", "alter table versioned alter column id add generated always as identity"},
      {"a unique index created", "", "create unique index versioned_note on versioned (note)"},
      {"a unique index dropped", "create unique index versioned_note on versioned (note)", "drop index versioned_note"},
      {"an index renamed", "create unique index versioned_note on versioned (note)",
       "alter index versioned_note rename to versioned_remark"},
      {"a trigger created", "create function versioned_touch() returns trigger language plpgsql as "
                            "$$begin new.updated_at := now(); return new; end$$",
       "create trigger touch before update on versioned for each row execute function versioned_touch()"},
      {"a trigger disabled", "create function versioned_touch() returns trigger language plpgsql as "
                             "$$begin new.updated_at := now(); return new; end$$;"
                             "create trigger touch before update on versioned for each row execute function "
                             "versioned_touch()",
       "alter table versioned disable trigger touch"},
      {"a column's domain renamed", "create domain versioned_code as text; alter table versioned add column code "
                                    "versioned_code",
       "alter domain versioned_code rename to versioned_label"},
      {"the table dropped and made again", "",
       "drop table versioned; create table versioned (id int primary key, note text, amount numeric, "
       "updated_at timestamptz not null)"},
      {"the table rewritten", "", "truncate versioned"},
  };
  for (const Change& c : changes) {
    const std::string what = c.what;
    CAPTURE(what);
    PgTestEnv env;
    PgConnection& db = env.source();
    db.exec("create table versioned (id int primary key, note text, amount numeric, updated_at timestamptz not null)");
    if (*c.before) db.exec(c.before);
    const auto before = version(db);
    REQUIRE(before);
    db.exec(c.change);
    const auto after = version(db);
    REQUIRE(after);
    CHECK(*after != *before);
  }
}

TEST_CASE("a relation's version stays while only its rows change, and is nothing once it is gone") {
  PgTestEnv env;
  PgConnection& db = env.source();
  db.exec("create table versioned (id int primary key, note text, amount numeric, updated_at timestamptz not null)");
  const auto before = version(db);
  REQUIRE(before);
  db.exec("insert into versioned select g, 'n', g, now() from generate_series(1, 1000) g");
  db.exec("update versioned set note = 'm' where id < 500");
  db.exec("delete from versioned where id > 900");
  db.exec("vacuum versioned");
  db.exec("analyze versioned");
  CHECK(version(db) == before);
  db.exec("alter table versioned rename to renamed");
  CHECK_FALSE(version(db));
}

TEST_CASE("a partitioned table's version changes when a partition comes or goes") {
  PgTestEnv env;
  PgConnection& db = env.source();
  db.exec("create table versioned (id int, updated_at timestamptz not null) partition by range (updated_at);"
          "create table versioned_2026 partition of versioned for values from ('2026-01-01') to ('2027-01-01')");
  const auto two = version(db);
  db.exec("create table versioned_2027 partition of versioned for values from ('2027-01-01') to ('2028-01-01')");
  const auto three = version(db);
  CHECK(three != two);
  db.exec("alter table versioned detach partition versioned_2027");
  const auto detached = version(db);
  CHECK(detached != three);
  // A partition's own row trigger changes what is written into the table.
  db.exec("create function versioned_touch() returns trigger language plpgsql as "
          "$$begin new.updated_at := now(); return new; end$$;"
          "create trigger touch before insert on versioned_2026 for each row execute function versioned_touch()");
  CHECK(version(db) != detached);
}

}  // namespace tidemark
