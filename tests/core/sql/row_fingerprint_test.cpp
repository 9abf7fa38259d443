#include "core/sql/row_fingerprint.h"

#include <doctest/doctest.h>

namespace tidemark {

TEST_CASE("a column is hashed by its value only where the type's equality is identity on both sides") {
  struct Case {
    const char* source;
    const char* target;
    FingerprintHash hash;
  };
  const Case cases[] = {
      {"bigint", "bigint", FingerprintHash::Halves},
      {"integer", "integer", FingerprintHash::Value},
      {"smallint", "smallint", FingerprintHash::Value},
      {"uuid", "uuid", FingerprintHash::Value},
      {"boolean", "boolean", FingerprintHash::Value},
      {"date", "date", FingerprintHash::Value},
      {"bytea", "bytea", FingerprintHash::Value},
      {"timestamp with time zone", "timestamp with time zone", FingerprintHash::Sent},
      {"timestamp(3) with time zone", "timestamp(3) with time zone", FingerprintHash::Sent},
      {"timestamp without time zone", "timestamp without time zone", FingerprintHash::Sent},
      {"time(0) without time zone", "time(0) without time zone", FingerprintHash::Sent},
      {"text", "text", FingerprintHash::Collated},
      {"character varying(20)", "character varying(20)", FingerprintHash::Collated},
      {"character varying", "character varying", FingerprintHash::Collated},
      // Equal under their operators, not the same value: by text.
      {"numeric(12,2)", "numeric(12,2)", FingerprintHash::Text},
      {"double precision", "double precision", FingerprintHash::Text},
      {"real", "real", FingerprintHash::Text},
      {"interval", "interval", FingerprintHash::Text},
      {"jsonb", "jsonb", FingerprintHash::Text},
      {"character(3)", "character(3)", FingerprintHash::Text},
      {"time with time zone", "time with time zone", FingerprintHash::Text},
      {"bigint[]", "bigint[]", FingerprintHash::Text},
      {"mood", "mood", FingerprintHash::Text},  // an enum: hashed by its OID, which differs
      {"public.\"text\"", "public.\"text\"", FingerprintHash::Text},  // a domain or type named text
      // Another type on the other side, or unknown there.
      {"timestamp without time zone", "timestamp with time zone", FingerprintHash::Text},
      {"timestamp(3) with time zone", "timestamp with time zone", FingerprintHash::Text},
      {"integer", "bigint", FingerprintHash::Text},
      {"text", "", FingerprintHash::Text},
      {"", "", FingerprintHash::Text},
  };
  for (const Case& c : cases) {
    CAPTURE(c.source);
    CAPTURE(c.target);
    CHECK(fingerprint_hash(FingerprintColumn{"c", c.source, c.target}) == c.hash);
  }
}

TEST_CASE("a fingerprint counts the rows and combines their hashes without regard to order") {
  const QualifiedName table("s", "T x");
  const std::vector<FingerprintColumn> columns = {{"id", "bigint", "bigint"},
                                                  {"n", "integer", "integer"},
                                                  {"B b", "text", "text"},
                                                  {"amount", "numeric", "numeric"},
                                                  {"at", "timestamp(3) with time zone", "timestamp(3) with time zone"},
                                                  {"local", "timestamp without time zone", "timestamp without time zone"},
                                                  {"t", "time without time zone", "time without time zone"}};
  CHECK(fingerprint_sql(table, columns, true) ==
        "SELECT count(*), coalesce(bit_xor(hashtextextended(hash_record_extended(ROW(\"id\", (\"id\" >> 32)::integer, "
        "\"n\", \"B b\" COLLATE \"C\", \"amount\"::text COLLATE \"C\", timestamptz_send(\"at\"), "
        "timestamp_send(\"local\"), time_send(\"t\")), 0)::text, 0)), 0)::text FROM \"s\".\"T x\"");
  // Before 14 (no bit_xor): the row's text, summed, folded into a bigint.
  CHECK(fingerprint_sql(table, {columns[0], columns[2]}, false) ==
        "SELECT count(*), (coalesce(sum(hashtextextended(ROW(\"id\", \"B b\")::text, 0)), 0) % "
        "9223372036854775807)::bigint::text FROM \"s\".\"T x\"");
}

}  // namespace tidemark

#include "core/sql/row_hash_statements.h"

namespace tidemark {

TEST_CASE("row hash streams: integers in their own order, uuids too, anything else by its text under C") {
  struct Case {
    const char* source;
    const char* target;
    KeyOrder order;
    const char* select;
    const char* order_by;
  };
  const Case cases[] = {
      {"bigint", "bigint", KeyOrder::Integer, "\"k\"::bigint", "\"k\""},
      {"integer", "bigint", KeyOrder::Integer, "\"k\"::bigint", "\"k\""},
      {"smallint", "integer", KeyOrder::Integer, "\"k\"::bigint", "\"k\""},
      {"uuid", "uuid", KeyOrder::Bytes, "\"k\"::text", "\"k\""},
      {"uuid", "text", KeyOrder::Bytes, "\"k\"::text", "\"k\"::text COLLATE \"C\""},
      {"text", "text", KeyOrder::Bytes, "\"k\"::text", "\"k\"::text COLLATE \"C\""},
      {"numeric", "numeric", KeyOrder::Bytes, "\"k\"::text", "\"k\"::text COLLATE \"C\""},
      {"integer", "numeric", KeyOrder::Bytes, "\"k\"::text", "\"k\"::text COLLATE \"C\""},
      {"timestamp with time zone", "timestamp with time zone", KeyOrder::Bytes, "\"k\"::text",
       "\"k\"::text COLLATE \"C\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.source);
    CAPTURE(c.target);
    TableConfig table;
    table.source_table = QualifiedName::parse("public.t").value();
    table.target_table = QualifiedName::parse("raw.t").value();
    table.key = {"k"};
    const std::vector<FingerprintColumn> columns{{"k", c.source, c.target}, {"v", "text", "text"}};
    const RowHashStatements s = row_hash_statements(table, columns, true);
    REQUIRE(s.order.size() == 1);
    CHECK(s.order[0] == c.order);
    const std::string hash = row_hash_sql(columns, true);
    CHECK(s.source == std::string("COPY (SELECT ") + c.select + ", " + hash + " FROM \"public\".\"t\" ORDER BY " +
                          c.order_by + ") TO STDOUT (FORMAT binary)");
    CHECK(s.target == std::string("COPY (SELECT ") + c.select + ", " + hash + " FROM \"raw\".\"t\" ORDER BY " +
                          c.order_by + ") TO STDOUT (FORMAT binary)");
  }
}

TEST_CASE("row hash streams: a composite key orders column by column") {
  TableConfig table;
  table.source_table = QualifiedName::parse("s.t").value();
  table.target_table = QualifiedName::parse("t").value();
  table.key = {"name", "n"};
  const std::vector<FingerprintColumn> columns{{"n", "integer", "integer"}, {"name", "text", "text"}};
  const RowHashStatements s = row_hash_statements(table, columns, false);
  CHECK(s.order == std::vector<KeyOrder>{KeyOrder::Bytes, KeyOrder::Integer});
  CHECK(s.target == "COPY (SELECT \"name\"::text, \"n\"::bigint, hashtextextended(ROW(\"n\", \"name\")::text, 0) FROM "
                    "\"t\" ORDER BY \"name\"::text COLLATE \"C\", \"n\") TO STDOUT (FORMAT binary)");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("row hash streams: a single integer key's blocks, each a range of its index, and the rows of chosen blocks") {
  TableConfig table;
  table.source_table = QualifiedName::parse("public.t").value();
  table.target_table = QualifiedName::parse("raw.t").value();
  table.key = {"id"};
  const std::vector<FingerprintColumn> columns{{"id", "bigint", "bigint"}, {"v", "text", "text"}};
  const KeyBlocks blocks{-5, 16, 3};
  const RowHashStatements b = block_statements(table, columns, true, blocks);
  CHECK(b.order == std::vector<KeyOrder>{KeyOrder::Integer});
  const std::string mixed = mixed_row_hash_sql(columns, true);
  CHECK(b.source == "COPY (SELECT tm_block, s.* FROM generate_series(0::bigint, (2)::bigint) AS tm_b(tm_block) CROSS "
                    "JOIN LATERAL (SELECT coalesce(bit_xor(" + mixed + "), 0) # count(*), count(*) FROM \"public\".\"t\" "
                    "WHERE \"id\" >= (-5)::bigint + tm_block * (16)::bigint AND \"id\" < (-5)::bigint + tm_block * "
                    "(16)::bigint + (16)::bigint) s UNION ALL SELECT NULL, n.* FROM (SELECT coalesce(bit_xor(" + mixed +
                    "), 0) # count(*), count(*) FROM \"public\".\"t\" WHERE \"id\" IS NULL) n ORDER BY 1) TO STDOUT "
                    "(FORMAT binary)");
  CHECK(b.target.find("FROM \"raw\".\"t\"") != std::string::npos);
  // Regression: blocks between servers before 14 called bit_xor, which
  // came with 14 ("function bit_xor(bigint) does not exist" on 12 and 13).
  const RowHashStatements before_14 = block_statements(table, columns, false, blocks);
  CHECK(before_14.source.find("bit_xor") == std::string::npos);
  CHECK(before_14.source.find("SELECT " + rows_hash_sql(columns, false) + " # count(*), count(*) FROM") !=
        std::string::npos);

  const RowHashStatements rows = row_hash_statements_in(table, columns, true, blocks, {0, 2}, false);
  CHECK(rows.source == "COPY (SELECT \"id\"::bigint, " + row_hash_sql(columns, true) +
                           " FROM \"public\".\"t\" WHERE (\"id\"::bigint - (-5)::bigint) / (16)::bigint = "
                           "ANY(ARRAY[0,2]::bigint[]) ORDER BY 1) TO STDOUT (FORMAT binary)");
  CHECK(row_hash_statements_in(table, columns, true, blocks, {}, true).target.find(
            "= ANY(ARRAY[]::bigint[]) OR \"id\" IS NULL ORDER BY 1") != std::string::npos);
  CHECK(key_range_statement(*table.source_table, "id") ==
        "SELECT min(\"id\")::bigint::text, max(\"id\")::bigint::text FROM \"public\".\"t\"");
}

TEST_CASE("regression: identical rows changed together into other identical rows change the fingerprint") {
  // bit_xor cancels a row's hash with its copy: {a, a, b} and {z, z, b}
  // fingerprinted alike, and a snapshot without a key called the change
  // unchanged, for good. Rows that may repeat are summed.
  const QualifiedName table = QualifiedName::parse("app.events").value();
  const std::vector<FingerprintColumn> columns{{"kind", "text", "text"}};
  const std::string keyed = fingerprint_sql(table, columns, true);
  CHECK(keyed.find("bit_xor(") != std::string::npos);
  const std::string repeating = fingerprint_sql(table, columns, true, false, true);
  CHECK(repeating.find("bit_xor(") == std::string::npos);
  CHECK(repeating.find("sum(" + mixed_row_hash_sql(columns, true) + ")") != std::string::npos);
  CHECK(rows_hash_sql(columns, true, true) ==
        "(coalesce(sum(" + mixed_row_hash_sql(columns, true) + "), 0) % 9223372036854775807)::bigint");
}

TEST_CASE("a table without a key as multisets: each distinct row hash with its count, ascending") {
  TableConfig table;
  table.source_table = QualifiedName::parse("app.readings").value();
  table.target_table = QualifiedName::parse("raw.readings").value();
  const std::vector<FingerprintColumn> columns{{"sensor", "integer", "integer"}, {"note", "text", "text"}};
  const std::string hash = row_hash_sql(columns, false);
  const RowHashStatements s = multiset_statements(table, columns, false);
  CHECK(s.order == std::vector<KeyOrder>{KeyOrder::Integer});
  // The hash is the key, the count both the "row hash" (a differing count
  // is a changed key) and the rows the entry stands for.
  CHECK(s.source == "COPY (SELECT tm_hash, count(*), count(*) FROM (SELECT " + hash +
                        " AS tm_hash FROM \"app\".\"readings\") tm_rows GROUP BY tm_hash ORDER BY tm_hash) TO STDOUT "
                        "(FORMAT binary)");
  CHECK(s.target.find("FROM \"raw\".\"readings\") tm_rows") != std::string::npos);
  CHECK(hashes_array({-3, 5, 9}) == "{-3,5,9}");
  CHECK(hashes_array({-3, 5, 9}, 1, 1) == "{5}");
  CHECK(hashes_array({-3, 5, 9}, 3, 2) == "{}");
  CHECK(multiset_statements(table, columns, false, "sensor > 2").source.find(" WHERE sensor > 2) tm_rows") !=
        std::string::npos);
  const RowsOfHashes rows = rows_of_hashes_statements(table, columns, false);
  CHECK(rows.delete_target == "DELETE FROM \"raw\".\"readings\" WHERE " + hash + " = ANY($1::bigint[])");
  CHECK(rows.select_source == "SELECT \"sensor\", \"note\" FROM \"app\".\"readings\" WHERE " + hash +
                                  " = ANY($1::bigint[])");
}

}  // namespace tidemark
