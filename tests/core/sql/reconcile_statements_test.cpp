#include <doctest/doctest.h>

#include "core/sql/load_statements.h"
#include "core/sql/reconcile_statements.h"

namespace tidemark {
namespace {

TableConfig table() {
  TableConfig t;
  t.source_table = *QualifiedName::parse("public.\"Or;ders\"");
  t.target_table = *QualifiedName::parse("raw.orders");
  t.key = {"order_id", "Line No"};
  t.cursor = "updated_at";
  return t;
}

}  // namespace

TEST_CASE("the source compares rows below the watermark and flags them among every key it lists") {
  const KeySideQueries q = source_key_queries(table(), CursorValue{CursorType::Integer, 42}, "H(row)");
  // A bucket's checksum covers each row's key and its hash.
  CHECK(q.bucket_sums ==
        "SELECT ((hashtextextended(tm_key, 0) & 9223372036854775807) % $1::bigint) AS tm_bucket, count(*), "
        "sum(hashtextextended(tm_key || ' ' || tm_row::text, 1))::text FROM (SELECT ROW(q.\"order_id\", "
        "q.\"Line No\")::text AS tm_key, H(row) AS tm_row FROM "
        "\"public\".\"Or;ders\" q WHERE q.\"updated_at\" < (42::bigint)) k GROUP BY 1");
  CHECK(q.keys.find("(q.\"updated_at\" < (42::bigint)) IS TRUE AS tm_flag, H(row) AS tm_row") != std::string::npos);
  CHECK(q.keys.rfind("SELECT tm_bucket, tm_key, tm_flag, tm_row, tm_c0, tm_c1 FROM", 0) == 0);
  CHECK(q.keys.find("q.\"Line No\" AS tm_c1") != std::string::npos);
  // Every key, in an order that is the same on both sides whatever their collation.
  CHECK(q.keys.find(" WHERE q.") == std::string::npos);
  CHECK(q.keys.substr(q.keys.size() - 38) == "ORDER BY tm_bucket, tm_key COLLATE \"C\"");
}

TEST_CASE("the target compares rows not marked, and flags the marked ones") {
  const KeySideQueries plain = target_key_queries(table(), "", "0");
  CHECK(plain.bucket_sums.find("FROM \"raw\".\"orders\" q WHERE true") != std::string::npos);
  CHECK(plain.keys.find("(false) IS TRUE AS tm_flag") != std::string::npos);
  const KeySideQueries marked = target_key_queries(table(), "Deleted At", "0");
  CHECK(marked.bucket_sums.find("WHERE q.\"Deleted At\" IS NULL") != std::string::npos);
  CHECK(marked.keys.find("(q.\"Deleted At\" IS NOT NULL) IS TRUE AS tm_flag") != std::string::npos);
}

TEST_CASE("keys travel as one JSON parameter, each value a string that its column's type parses") {
  KeyRow a;
  a.columns = {std::string("7"), std::string("tab\there \"quoted\" \\ \x01")};
  KeyRow b;
  b.columns = {std::string("8"), std::nullopt};
  CHECK(keys_json({"order_id", "Line No"}, {a, b}) ==
        R"([{"order_id":"7","Line No":"tab\there \"quoted\" \\ \u0001"},{"order_id":"8","Line No":null}])");
  CHECK(keys_json({"id"}, {}) == "[]");
}

TEST_CASE("the fix: delete or mark by key, copy again only below the watermark") {
  // Keys are read as each side's own key types: a record of the whole row
  // type would trip a NOT NULL domain on another column.
  const KeyTypes types{{{"bigint"}, {"integer"}}, {{"numeric(20,0)"}, {"smallint"}}};
  const ReconcileStatements s = reconcile_statements(table(), {"order_id", "Line No", "updated_at"}, "",
                                                     CursorValue{CursorType::Integer, 42}, types);
  CHECK(s.delete_keys ==
        "DELETE FROM \"raw\".\"orders\" t USING json_to_recordset($1::json) AS d(\"order_id\" numeric(20,0), "
        "\"Line No\" smallint) WHERE t.\"order_id\" = d.\"order_id\" AND t.\"Line No\" = d.\"Line No\"");
  CHECK(s.mark_keys.empty());
  CHECK(s.copy_source ==
        "SELECT s.\"order_id\", s.\"Line No\", s.\"updated_at\" FROM \"public\".\"Or;ders\" s WHERE s.\"updated_at\" < "
        "(42::bigint) AND EXISTS (SELECT 1 FROM json_to_recordset($1::json) AS d(\"order_id\" bigint, \"Line No\" "
        "integer) WHERE s.\"order_id\" = d.\"order_id\" AND s.\"Line No\" = d.\"Line No\")");
  const ReconcileStatements m =
      reconcile_statements(table(), {"order_id", "Line No", "updated_at"}, "deleted_at", CursorValue{}, types);
  CHECK(m.mark_keys.find("SET \"deleted_at\" = now() FROM") != std::string::npos);
  CHECK(m.mark_keys.substr(m.mark_keys.size() - 26) == "AND t.\"deleted_at\" IS NULL");
}

TEST_CASE("regression: a NULL key column matched nothing, so a row with a NULL key was never deleted") {
  // Only a key column in which a key of the batch is NULL (under a NULLS
  // NOT DISTINCT index) is compared null-safely: IS NOT DISTINCT FROM
  // serves no index.
  const KeyTypes types{{{"bigint"}, {"integer", true}}, {{"bigint"}, {"integer", true}}};
  const ReconcileStatements s = reconcile_statements(table(), {"order_id", "Line No", "updated_at"}, "deleted_at",
                                                     CursorValue{CursorType::Integer, 42}, types);
  const std::string match = "t.\"order_id\" = d.\"order_id\" AND t.\"Line No\" IS NOT DISTINCT FROM d.\"Line No\"";
  CHECK(s.delete_keys.find(match) != std::string::npos);
  CHECK(s.mark_keys.find(match) != std::string::npos);
  CHECK(s.copy_source.find("s.\"order_id\" = d.\"order_id\" AND s.\"Line No\" IS NOT DISTINCT FROM d.\"Line No\"") !=
        std::string::npos);
  CHECK(held_keys(table(), *QualifiedName::parse("raw.orders"), types.target)
            .find("q.\"Line No\" IS NOT DISTINCT FROM d.\"Line No\"") != std::string::npos);
}

TEST_CASE("with action mark the load's upsert clears the mark of every row it writes, changed or not") {
  TableConfig t = table();
  t.deletes = DeletesConfig{std::nullopt, DeleteAction::Mark, "deleted_at", {}, {}};
  const Window w{CursorValue{CursorType::Integer, 0}, CursorValue{CursorType::Integer, 1}};
  const LoadStatements s = build_load_statements(t, {"order_id", "Line No", "amount"}, w);
  CHECK(s.upsert.find("DO UPDATE SET \"order_id\" = EXCLUDED.\"order_id\", \"Line No\" = EXCLUDED.\"Line No\", "
                      "\"amount\" = EXCLUDED.\"amount\", \"deleted_at\" = NULL WHERE NOT record_image_eq(ROW(t.\"order_id\", "
                      "t.\"Line No\", t.\"amount\"), ROW(EXCLUDED.\"order_id\", EXCLUDED.\"Line No\", EXCLUDED.\"amount\")) OR "
                      "t.\"deleted_at\" IS NOT NULL") !=
        std::string::npos);
  // All columns key: still clears the mark.
  const LoadStatements keys_only = build_load_statements(t, {"order_id", "Line No"}, w);
  CHECK(keys_only.upsert.find("DO UPDATE SET \"deleted_at\" = NULL WHERE false OR t.\"deleted_at\" IS NOT NULL") !=
        std::string::npos);
  // Action delete: the upsert as before.
  t.deletes->action = DeleteAction::Delete;
  CHECK(build_load_statements(t, {"order_id", "Line No", "amount"}, w).upsert.find("deleted_at") == std::string::npos);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("the key listing for a held cursor carries its bucket count and list as digits") {
  TableConfig t;
  t.source_table = *QualifiedName::parse("s.t");
  t.target_table = *QualifiedName::parse("r.t");
  t.key = {"id"};
  t.cursor = "c";
  const std::string listing = source_key_listing(t, CursorValue{CursorType::Integer, 9}, "0", 100, {3, 17});
  CHECK(listing.find("% (100::bigint)) AS tm_bucket") != std::string::npos);
  CHECK(listing.find("tm_bucket = ANY(ARRAY[3,17]::bigint[])") != std::string::npos);
  CHECK(listing.find('$') == std::string::npos);
  CHECK(target_key_listing(t, "gone_at", "0", 7, {1}).find("(q.\"gone_at\" IS NOT NULL) IS TRUE AS tm_flag") !=
        std::string::npos);
}

}  // namespace tidemark
