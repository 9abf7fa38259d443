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
      {"bigint", "bigint", FingerprintHash::Value},
      {"integer", "integer", FingerprintHash::Value},
      {"smallint", "smallint", FingerprintHash::Value},
      {"uuid", "uuid", FingerprintHash::Value},
      {"boolean", "boolean", FingerprintHash::Value},
      {"date", "date", FingerprintHash::Value},
      {"bytea", "bytea", FingerprintHash::Value},
      {"timestamp with time zone", "timestamp with time zone", FingerprintHash::Value},
      {"timestamp(3) with time zone", "timestamp(3) with time zone", FingerprintHash::Value},
      {"timestamp without time zone", "timestamp without time zone", FingerprintHash::Value},
      {"time(0) without time zone", "time(0) without time zone", FingerprintHash::Value},
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
  const std::vector<FingerprintColumn> columns = {
      {"id", "bigint", "bigint"}, {"B b", "text", "text"}, {"amount", "numeric", "numeric"}};
  CHECK(fingerprint_sql(table, columns, true) ==
        "SELECT count(*), coalesce(bit_xor(hashint8extended(hash_record_extended(ROW(\"id\", \"B b\" COLLATE \"C\", "
        "\"amount\"::text COLLATE \"C\"), 0), 0)), 0)::text FROM \"s\".\"T x\"");
  // Before 14: the row's text, summed.
  CHECK(fingerprint_sql(table, columns, false) ==
        "SELECT count(*), coalesce(sum(hashtextextended(ROW(\"id\", \"B b\", \"amount\")::text, 0)), 0)::text "
        "FROM \"s\".\"T x\"");
}

}  // namespace tidemark
