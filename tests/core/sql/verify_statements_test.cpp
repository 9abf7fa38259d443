#include <doctest/doctest.h>

#include "core/sql/verify_statements.h"

namespace tidemark {

TEST_CASE("a partition's check: the query's rows on the source as the target stores them, the partition's there") {
  TableConfig t;
  t.target_table = *QualifiedName::parse("mart.\"Daily\"");
  t.partition = PartitionSpec{"day start", PartitionUnit::Day};
  t.query = "select $1::date as \"day start\", count(*) as n, 'x' as mood from orders where at >= $1 and at < $2;\n ";
  const PartitionVerifyQueries q =
      partition_verify_queries(t, {{"day start", "date"}, {"n", "numeric(12,2)"}, {"mood", ""}}, "date");
  // The trailing semicolon would end the statement inside the parentheses.
  CHECK(q.source ==
        "SELECT count(*), coalesce(sum(hashtextextended(row(((q.\"day start\"::text)::date)::text, "
        "((q.\"n\"::text)::numeric(12,2))::text, q.\"mood\"::text)::text, 0)::numeric), 0)::text FROM (\n"
        "select $1::date as \"day start\", count(*) as n, 'x' as mood from orders where at >= $1 and at < $2\n) q");
  CHECK(q.target ==
        "SELECT count(*), coalesce(sum(hashtextextended(row(\"day start\"::text, \"n\"::text, \"mood\"::text)::text, "
        "0)::numeric), 0)::text FROM \"mart\".\"Daily\" WHERE \"day start\" >= $1::date AND \"day start\" < $2::date");
}

TEST_CASE("regression: verify's checksum tells a NULL from the text \\N and keeps the columns' bounds") {
  // Each value was coalesced to '\N' and the values joined with \x1f: a
  // NULL and the text \N, or a value holding \x1f, summed alike.
  const Window ids{CursorValue{CursorType::Integer, 1}, CursorValue{CursorType::Integer, 9}};
  const std::string q = verify_query(*QualifiedName::parse("raw.events"), {"id", "kind"}, "id", ids, "UTC");
  CHECK(q.find("hashtextextended(row(\"id\"::text, \"kind\"::text)::text, 0)") != std::string::npos);
  CHECK(q.find("coalesce(\"") == std::string::npos);
  CHECK(q.find("x1f") == std::string::npos);
}

TEST_CASE("verify --keys: the rows of one bucket are the window's rows whose day is that bucket") {
  const Window ids{CursorValue{CursorType::Integer, 91}, CursorValue{CursorType::Integer, 101}};
  CHECK(verify_bucket_predicate("event id", ids, "UTC", "all") ==
        "(\"event id\" >= (91::bigint) AND \"event id\" < (101::bigint)) AND 'all' = 'all'");
  const Window days{CursorValue{CursorType::Date, 0}, CursorValue{CursorType::Date, 2}};
  const std::string by_day = verify_bucket_predicate("d", days, "UTC", "1970-01-02");
  CHECK(by_day.rfind("(\"d\" >= ", 0) == 0);
  CHECK(by_day.find(") AND \"d\"::text = '1970-01-02'") != std::string::npos);
  // The zone and the bucket are literals, quoted like any value.
  const Window at{CursorValue{CursorType::TimestampTz, 0}, CursorValue{CursorType::TimestampTz, 86400000000}};
  const std::string zoned = verify_bucket_predicate("at", at, "Europe/O'Hare", "x'y");
  CHECK(zoned.find(") AND (\"at\" at time zone 'Europe/O''Hare')::date::text = 'x''y'") != std::string::npos);
}

}  // namespace tidemark
