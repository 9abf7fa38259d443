#include <doctest/doctest.h>

#include "core/sql/load_statements.h"

namespace tidemark {

TEST_CASE("load statements quote every identifier and use a half-open window") {
  TableConfig t;
  t.source_table = *QualifiedName::parse("public.\"Or;ders\"");
  t.target_table = *QualifiedName::parse("raw.orders");
  t.key = {"order_id"};
  t.cursor = "Updated At";
  const Window w{CursorValue{CursorType::Integer, 5}, CursorValue{CursorType::Integer, 9}};
  const LoadStatements s = build_load_statements(t, {"order_id", "status", "Updated At"}, w);
  CHECK(s.copy_out ==
        "COPY (SELECT \"order_id\", \"status\", \"Updated At\" FROM \"public\".\"Or;ders\" WHERE \"Updated At\" >= "
        "(5::bigint) AND \"Updated At\" < (9::bigint)) TO STDOUT");
  CHECK(s.upsert ==
        "INSERT INTO \"raw\".\"orders\" AS t (\"order_id\", \"status\", \"Updated At\") SELECT \"order_id\", "
        "\"status\", \"Updated At\" FROM \"tidemark_stage\" ON CONFLICT (\"order_id\") DO UPDATE SET \"order_id\" = "
        "EXCLUDED.\"order_id\", \"status\" = EXCLUDED.\"status\", \"Updated At\" = EXCLUDED.\"Updated At\" WHERE NOT "
        "record_image_eq(ROW(t.\"order_id\", t.\"status\", t.\"Updated At\"), ROW(EXCLUDED.\"order_id\", "
        "EXCLUDED.\"status\", EXCLUDED.\"Updated At\"))");
  CHECK(s.copy_out.find("BETWEEN") == std::string::npos);
  CHECK(s.copy_into_stage == "COPY \"tidemark_stage\" (\"order_id\", \"status\", \"Updated At\") FROM STDIN");
  CHECK(s.copy_into_target == "COPY \"raw\".\"orders\" (\"order_id\", \"status\", \"Updated At\") FROM STDIN");
}

TEST_CASE("the window probe asks for one row of the half-open range and counts what no window includes") {
  TableConfig t;
  t.source_table = *QualifiedName::parse("public.\"Or;ders\"");
  t.cursor = "Updated At";
  const Window w{CursorValue{CursorType::Integer, 5}, CursorValue{CursorType::Integer, 9}};
  CHECK(window_probe_statement(t, w, CursorType::Integer, /*never_null=*/false) ==
        "SELECT EXISTS (SELECT FROM \"public\".\"Or;ders\" WHERE \"Updated At\" >= (5::bigint) AND \"Updated At\" < "
        "(9::bigint)), n.* FROM (SELECT count(*) FILTER (WHERE \"Updated At\" IS NULL), count(*) FILTER (WHERE false) "
        "FROM \"public\".\"Or;ders\" WHERE \"Updated At\" IS NULL OR false) n");
  // Without a range only the counts are asked; a time cursor's infinities count.
  CHECK(window_probe_statement(t, std::nullopt, CursorType::TimestampTz, /*never_null=*/false) ==
        "SELECT true, n.* FROM (SELECT count(*) FILTER (WHERE \"Updated At\" IS NULL), count(*) FILTER (WHERE "
        "\"Updated At\" IN ('infinity', '-infinity')) FROM \"public\".\"Or;ders\" WHERE \"Updated At\" IS NULL OR "
        "\"Updated At\" IN ('infinity', '-infinity')) n");
  // A validated NOT NULL cursor: no NULL is counted; an integer one has
  // nothing to count at all.
  CHECK(window_probe_statement(t, std::nullopt, CursorType::TimestampTz, /*never_null=*/true) ==
        "SELECT true, n.* FROM (SELECT 0::bigint, count(*) FROM \"public\".\"Or;ders\" WHERE \"Updated At\" IN "
        "('infinity', '-infinity')) n");
  CHECK(window_probe_statement(t, w, CursorType::Integer, /*never_null=*/true) ==
        "SELECT EXISTS (SELECT FROM \"public\".\"Or;ders\" WHERE \"Updated At\" >= (5::bigint) AND \"Updated At\" < "
        "(9::bigint)), n.* FROM (SELECT 0::bigint, 0::bigint) n");
}

TEST_CASE("binary COPY statements say so on both sides") {
  TableConfig t;
  t.source_table = *QualifiedName::parse("s.t");
  t.target_table = *QualifiedName::parse("r.t");
  t.key = {"a"};
  t.cursor = "b";
  const Window w{CursorValue{CursorType::Integer, 0}, CursorValue{CursorType::Integer, 1}};
  const LoadStatements s = build_load_statements(t, {"a", "b"}, w, CopyFormat::Binary);
  CHECK(s.copy_out ==
        "COPY (SELECT \"a\", \"b\" FROM \"s\".\"t\" WHERE \"b\" >= (0::bigint) AND \"b\" < (1::bigint)) TO STDOUT "
        "(FORMAT binary)");
  CHECK(s.copy_into_stage == "COPY \"tidemark_stage\" (\"a\", \"b\") FROM STDIN (FORMAT binary)");
  CHECK(s.copy_into_target == "COPY \"r\".\"t\" (\"a\", \"b\") FROM STDIN (FORMAT binary)");
  // The upsert reads the stage, whatever filled it.
  CHECK(s.upsert == build_load_statements(t, {"a", "b"}, w).upsert);
}

TEST_CASE("a table whose columns are all key does nothing on conflict") {
  TableConfig t;
  t.source_table = *QualifiedName::parse("s.t");
  t.target_table = *QualifiedName::parse("r.t");
  t.key = {"a", "b"};
  t.cursor = "a";
  const Window w{CursorValue{CursorType::Integer, 0}, CursorValue{CursorType::Integer, 1}};
  const LoadStatements s = build_load_statements(t, {"a", "b"}, w);
  CHECK(s.upsert.substr(s.upsert.size() - 10) == "DO NOTHING");
}

TEST_CASE("regression: a table whose columns are all key never copies straight into an empty target") {
  // The upsert keeps one of two equal rows; a COPY into the target failed
  // on its unique index.
  TableConfig t;
  t.source_table = *QualifiedName::parse("s.t");
  t.target_table = *QualifiedName::parse("r.t");
  t.key = {"a", "b"};
  t.cursor = "a";
  const Window w{CursorValue{CursorType::Integer, 0}, CursorValue{CursorType::Integer, 1}};
  CHECK(build_load_statements(t, {"a", "b"}, w).copy_into_target.empty());
  CHECK(build_load_statements(t, {"a", "b"}, w, CopyFormat::Binary).copy_into_target.empty());
  CHECK_FALSE(build_load_statements(t, {"a", "b", "c"}, w).copy_into_target.empty());
}

TEST_CASE("a snapshot reads the whole table, reads the source's clock and deletes NULL-safely where a key may be NULL") {
  TableConfig t;
  t.mode = TableMode::Snapshot;
  t.source_table = *QualifiedName::parse("s.t");
  t.target_table = *QualifiedName::parse("r.t");
  t.key = {"a", "b"};
  const std::vector<ColumnShape> catalog = {{"a", "bigint", true, true}, {"b", "text", false, false}, {"c", "text"}};
  const LoadStatements s = build_load_statements(t, {"a", "b", "c"}, std::nullopt, CopyFormat::Text,
                                                 RelationKind::Table, catalog);
  CHECK(s.lock_source == "SELECT FROM \"s\".\"t\" LIMIT 0");
  CHECK(s.copy_out == "COPY (SELECT \"a\", \"b\", \"c\" FROM \"s\".\"t\") TO STDOUT");
  CHECK(s.source_clock.find("pg_last_xact_replay_timestamp()") != std::string::npos);
  // `=` for the hash anti-join; NULL-safe only for rows with a NULL in the key.
  CHECK(s.delete_gone ==
        "DELETE FROM \"r\".\"t\" AS t WHERE NOT EXISTS (SELECT 1 FROM \"tidemark_stage\" AS s WHERE s.\"a\" = t.\"a\" "
        "AND s.\"b\" = t.\"b\") AND NOT ((t.\"b\" IS NULL) AND EXISTS (SELECT 1 FROM \"tidemark_stage\" AS s WHERE "
        "s.\"a\" IS NOT DISTINCT FROM t.\"a\" AND s.\"b\" IS NOT DISTINCT FROM t.\"b\"))");
  CHECK(s.clear_target == "DELETE FROM \"r\".\"t\"");
  // A chunk's statements have none of it.
  t.mode = TableMode::Incremental;
  t.cursor = "a";
  const Window w{CursorValue{CursorType::Integer, 0}, CursorValue{CursorType::Integer, 1}};
  const LoadStatements chunk = build_load_statements(t, {"a", "b", "c"}, w);
  CHECK(chunk.source_clock.empty());
  CHECK(chunk.delete_gone.empty());
  CHECK(chunk.clear_target.empty());
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("the upsert compares a row's whole image only where its cursor stayed, if its type allows") {
  TableConfig t;
  t.source_table = *QualifiedName::parse("s.t");
  t.target_table = *QualifiedName::parse("r.t");
  t.key = {"id"};
  t.cursor = "at";
  const Window w{CursorValue{CursorType::Integer, 0}, CursorValue{CursorType::Integer, 1}};
  const auto upsert = [&](const std::vector<std::string>& columns, const std::string& target_cursor_type) {
    const std::vector<ColumnShape> target = {{"id", "bigint"}, {"v", "text"}, {"at", target_cursor_type}};
    return build_load_statements(t, columns, w, CopyFormat::Text, RelationKind::Table, {}, target).upsert;
  };
  const std::string cursor_first = "WHERE t.\"at\" IS DISTINCT FROM EXCLUDED.\"at\" OR NOT record_image_eq(";
  const std::string image_alone = "WHERE NOT record_image_eq(";
  struct Case {
    const char* target_type;
    bool cursor_first;
  };
  const Case cases[] = {
      {"timestamp with time zone", true}, {"timestamp(3) with time zone", true}, {"timestamp without time zone", true},
      {"timestamp(0) without time zone", true}, {"date", true}, {"bigint", true}, {"integer", true},
      {"smallint", true},
      // No `=` (a cursor's text fills them all the same), or one that is not identity.
      {"json", false}, {"xml", false}, {"numeric", false}, {"text", false}, {"timestamp_like", false},
      {"timestamptz_domain", false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.target_type);
    const std::string s = upsert({"id", "v", "at"}, c.target_type);
    CHECK(s.find(c.cursor_first ? cursor_first : image_alone) != std::string::npos);
  }
  // `columns:` leaves the cursor out, or no target columns are known: the image alone decides.
  CHECK(upsert({"id", "v"}, "bigint").find(image_alone) != std::string::npos);
  CHECK(build_load_statements(t, {"id", "v", "at"}, w).upsert.find(image_alone) != std::string::npos);
  // A cursor that is the key never moves on a conflict.
  t.key = {"at"};
  CHECK(upsert({"id", "v", "at"}, "bigint").find(image_alone) != std::string::npos);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("a table without a key copies straight into its target: no stage, no upsert, no delete by key") {
  TableConfig t;
  t.source_table = *QualifiedName::parse("app.events");
  t.target_table = *QualifiedName::parse("raw.events");
  t.cursor = "id";
  const Window w{CursorValue{CursorType::Integer, 10}, CursorValue{CursorType::Integer, 20}};
  const LoadStatements append = build_load_statements(t, {"id", "kind"}, w, CopyFormat::Binary);
  CHECK(append.copy_into_target == "COPY \"raw\".\"events\" (\"id\", \"kind\") FROM STDIN (FORMAT binary)");
  CHECK(append.upsert.empty());
  CHECK(append.delete_gone.empty());
  CHECK(append.clear_target.empty());  // an append never clears what it inserted
  CHECK(append.source_clock.empty());

  t.cursor.clear();
  const LoadStatements snapshot = build_load_statements(t, {"id", "kind"}, std::nullopt);
  CHECK(snapshot.copy_into_target == "COPY \"raw\".\"events\" (\"id\", \"kind\") FROM STDIN");
  CHECK(snapshot.clear_target == "DELETE FROM \"raw\".\"events\"");
  CHECK(snapshot.upsert.empty());
  CHECK(snapshot.delete_gone.empty());
  CHECK_FALSE(snapshot.source_clock.empty());  // a snapshot's watermark is the source's clock
}

}  // namespace tidemark
