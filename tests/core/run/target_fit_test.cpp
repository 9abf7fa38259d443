// Which targets refuse_target turns away before the first write: the ones
// that would take a first load (COPY into an empty table) and refuse every
// upsert after it, or let a NULL key repeat.
#include <doctest/doctest.h>

#include "core/run/target_fit.h"

namespace tidemark {
namespace {

ColumnShape column(const std::string& name, bool not_null, ColumnFill fill = ColumnFill::None,
                   const std::string& type = "integer", const std::string& collation = "") {
  ColumnShape c{name, type};
  c.nondeterministic_collation = collation;
  c.not_null = not_null;
  c.fill = fill;
  return c;
}

UniqueIndex index(const std::string& name, std::vector<std::string> columns) {
  UniqueIndex u;
  u.name = name;
  u.columns = std::move(columns);
  return u;
}

UniqueIndex with(UniqueIndex u, bool UniqueIndex::*flag, bool value) {
  u.*flag = value;
  return u;
}

}  // namespace

TEST_CASE("target fit: the key's index, NULL keys and columns the target fills itself") {
  const ColumnShape a_not_null = column("a", true);
  const ColumnShape a_nullable = column("a", false);
  const ColumnShape b_nullable = column("b", false);
  const ColumnShape v = column("v", false);
  const UniqueIndex pk = index("t_pkey", {"a"});
  const UniqueIndex ab = index("t_a_b_key", {"a", "b"});

  struct Row {
    const char* what;
    std::vector<std::string> key;
    std::vector<ColumnShape> source;
    std::vector<ColumnShape> target;
    std::vector<UniqueIndex> indexes;
    std::string refusal;  // a part of the message; empty: the target fits
    std::vector<UniqueIndex> source_indexes = {};
    std::vector<RowTrigger> triggers = {};
  };
  const Row rows[] = {
      {"a primary key", {"a"}, {a_not_null, v}, {a_not_null, v}, {pk}, ""},
      {"no index at all", {"a"}, {a_not_null, v}, {a_not_null, v}, {},
       "has no unique index or primary key on exactly (a): create one, e.g. CREATE UNIQUE INDEX ON r.t (a)"},
      {"an index on more columns", {"a"}, {a_not_null, v}, {a_not_null, v}, {index("t_a_v_key", {"a", "v"})},
       "its unique indexes: t_a_v_key (a, v); INCLUDE columns do not count"},
      {"key [a, v] and an index on (a) INCLUDE (v)", {"a", "v"}, {a_not_null, column("v", true)},
       {a_not_null, column("v", true)}, {index("t_a_inc", {"a"})}, "its unique indexes: t_a_inc (a)"},
      {"key [a] and an index on (a) INCLUDE (v)", {"a"}, {a_not_null, v}, {a_not_null, v}, {index("t_a_inc", {"a"})},
       ""},
      {"the key's columns in another order", {"b", "a"}, {a_not_null, column("b", true)},
       {a_not_null, column("b", true)}, {ab}, ""},
      {"an invalid index", {"a"}, {a_not_null, v}, {a_not_null, v}, {with(pk, &UniqueIndex::valid, false)},
       "unique index t_pkey on (a) is not valid (a CREATE INDEX CONCURRENTLY that failed leaves it so): REINDEX INDEX"},
      {"an invalid index beside a valid one", {"a"}, {a_not_null, v}, {a_not_null, v},
       {with(index("t_a_old", {"a"}), &UniqueIndex::valid, false), pk}, ""},
      {"a deferrable key", {"a"}, {a_not_null, v}, {a_not_null, v}, {with(pk, &UniqueIndex::immediate, false)},
       "is DEFERRABLE, which INSERT ... ON CONFLICT cannot use"},
      {"a partial index", {"a"}, {a_not_null, v}, {a_not_null, v}, {with(pk, &UniqueIndex::partial, true)},
       "has a WHERE clause"},
      {"an expression index", {"a"}, {a_not_null, v}, {a_not_null, v}, {with(pk, &UniqueIndex::expressions, true)},
       "(a, expressions)"},
      {"a NULL key, nullable on both sides, plain index", {"a", "b"}, {a_not_null, b_nullable}, {a_not_null, b_nullable},
       {ab},
       "key column b can hold NULL in the source and in target table r.t, whose unique index t_a_b_key treats NULLs "
       "as distinct"},
      {"a NULL key with NULLS NOT DISTINCT on both sides", {"a", "b"}, {a_not_null, b_nullable},
       {a_not_null, b_nullable}, {with(ab, &UniqueIndex::nulls_not_distinct, true)}, "",
       {with(ab, &UniqueIndex::nulls_not_distinct, true)}},
      {"a NULL key with NULLS NOT DISTINCT in the target only", {"a", "b"}, {a_not_null, b_nullable},
       {a_not_null, b_nullable}, {with(ab, &UniqueIndex::nulls_not_distinct, true)},
       "key column b can hold NULL in the source, which has no unique index on (a, b) WITH NULLS NOT DISTINCT, so "
       "it may hold several rows under one NULL key",
       {ab}},
      {"a plain and a NULLS NOT DISTINCT index: the latter serves", {"a", "b"}, {a_not_null, b_nullable},
       {a_not_null, b_nullable}, {ab, with(index("t_a_b_nnd", {"a", "b"}), &UniqueIndex::nulls_not_distinct, true)},
       "", {with(ab, &UniqueIndex::nulls_not_distinct, true)}},
      {"a BEFORE row trigger that can change what a load writes", {"a"}, {a_not_null, v}, {a_not_null, v}, {pk},
       "has trigger stamp, which runs BEFORE INSERT or UPDATE on each row and can change the values a load writes, "
       "so the target would not hold the source's: disable it there (ALTER TABLE r.t DISABLE TRIGGER \"stamp\")",
       {}, {{QualifiedName("r", "t"), "stamp"}}},
      {"a row trigger on a partition only: disabled on that partition", {"a"}, {a_not_null, v}, {a_not_null, v}, {pk},
       "target table r.t has a partition, r.t_2026, with trigger stamp, which runs BEFORE INSERT or UPDATE on each "
       "row and can change the values a load writes, so the target would not hold the source's: disable it there "
       "(ALTER TABLE r.t_2026 DISABLE TRIGGER \"stamp\"), and the others like it (audit on r.t_2027)",
       {}, {{QualifiedName("r", "t_2026"), "stamp"}, {QualifiedName("r", "t_2027"), "audit"}}},
      {"nullable in the source, NOT NULL in the target: a NULL fails loudly", {"a", "b"}, {a_not_null, b_nullable},
       {a_not_null, column("b", true)}, {ab}, ""},
      {"nullable in the target only", {"a", "b"}, {a_not_null, column("b", true)}, {a_not_null, b_nullable}, {ab},
       ""},
      {"a view's key (never NOT NULL) into a primary key", {"a"}, {a_nullable, v}, {a_not_null, v}, {pk}, ""},
      {"a copied identity ALWAYS column", {"a"}, {a_not_null, v}, {column("a", true, ColumnFill::IdentityAlways), v},
       {pk}, "GENERATED ALWAYS AS IDENTITY, which refuses the source's values in every load after the first"},
      {"an identity BY DEFAULT column", {"a"}, {a_not_null, v}, {column("a", true, ColumnFill::IdentityByDefault), v},
       {pk}, ""},
      {"a key column the target generates", {"a"}, {a_not_null, v}, {column("a", true, ColumnFill::Generated), v},
       {pk}, "generates key column a itself"},
      // Regression: a case-insensitive target key under a "C" source key
      // took `ABC` over `abc`, and every later run turned the row back.
      {"a key the target compares case-insensitively", {"a"}, {column("a", true, ColumnFill::None, "text"), v},
       {column("a", true, ColumnFill::None, "text", "\"und-ci\""), v}, {pk},
       "key column a of target table r.t would merge keys the source keeps apart (one row would overwrite another, "
       "every run): collation \"und-ci\""},
      // Regression: a character(5) target key under a varchar(5) source
      // held 'a ' and 'a' as one row, then failed every run.
      {"a key the target pads", {"a"}, {column("a", true, ColumnFill::None, "character varying(5)"), v},
       {column("a", true, ColumnFill::None, "character(5)"), v}, {pk}, "ignores trailing blanks"},
      {"a key of the same type and a deterministic collation", {"a"}, {column("a", true, ColumnFill::None, "text"), v},
       {column("a", true, ColumnFill::None, "text"), v}, {pk}, ""},
  };
  for (const Row& row : rows) {
    CAPTURE(std::string(row.what));
    TableConfig table;
    table.key = row.key;
    table.target_table = QualifiedName("r", "t");
    std::vector<std::string> loaded;
    for (const ColumnShape& c : row.source) loaded.push_back(c.name);
    const auto refusal = refuse_target(table, SourceKeys{row.source, row.source_indexes},
                                       TargetTable{row.target, row.indexes, row.triggers}, loaded);
    if (row.refusal.empty()) {
      CHECK(refusal.value_or("") == "");
    } else {
      REQUIRE(refusal);
      CHECK(refusal->find(row.refusal) != std::string::npos);
    }
  }
}

TEST_CASE("target fit: an identity ALWAYS column is refused only when a chunk copies it") {
  TableConfig table;
  table.key = {"a"};
  table.target_table = QualifiedName("r", "t");
  const std::vector<ColumnShape> source = {column("a", true), column("v", false)};
  const TargetTable target{{column("a", true), column("v", false), column("n", true, ColumnFill::IdentityAlways)},
                           {index("t_pkey", {"a"})},
                           {}};
  const std::vector<UniqueIndex> none;
  CHECK_FALSE(refuse_target(table, SourceKeys{source, none}, target, {"a", "v"}));
  const auto refusal = refuse_target(table, SourceKeys{source, none}, target, {"a", "v", "n"});
  REQUIRE(refusal);
  CHECK(refusal->find("ALTER TABLE r.t ALTER COLUMN \"n\" SET GENERATED BY DEFAULT), or leave it out with columns:") !=
        std::string::npos);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("load warnings: a cursor the database does not stamp, and unique indexes checked row by row") {
  TableConfig table;
  table.key = {"a"};
  table.cursor = "updated_at";
  table.source_table = *QualifiedName::parse("public.t");
  table.target_table = *QualifiedName::parse("r.t");
  UniqueIndex email;
  email.name = "t_email_key";
  email.columns = {"email"};
  UniqueIndex deferred = email;
  deferred.name = "t_email_deferred";
  deferred.immediate = false;
  UniqueIndex pk;
  pk.name = "t_pkey";
  pk.columns = {"a"};
  const TargetTable target{{}, {pk, email, deferred}, {}};

  auto warnings = load_warnings(table, CursorType::TimestampTz, false, target, {"a", "email", "updated_at"});
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0].find("cursor updated_at has no default and no trigger in public.t: when the application stamps it "
                         "with its own clock") == 0);
  CHECK(warnings[1].find("unique index t_email_key of r.t on (email) is checked row by row") == 0);
  // A lookback covers the application's clock; a column not loaded cannot trip the index.
  table.lookback = CursorSpan{CursorSpan::Kind::Duration, 60};
  CHECK(load_warnings(table, CursorType::TimestampTz, false, target, {"a", "updated_at"}).empty());
  table.lookback = CursorSpan{};
  warnings = load_warnings(table, CursorType::Integer, false, TargetTable{{}, {pk}, {}}, {"a"});
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("ids the application allocates itself") != std::string::npos);
  CHECK(load_warnings(table, CursorType::Integer, true, TargetTable{{}, {pk}, {}}, {"a"}).empty());
}

}  // namespace tidemark
