// The first look of the row diff: when a horizon still tells the rows
// written since it, when taking the recent rows out of both fingerprints
// proves the rest equal (as a table of cases), and the union of both
// sides' recent keys.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/diff/recent_rows.h"
#include "diff/list_stream.h"

namespace tidemark {
namespace {

using testing::ListStream;
using testing::Row;

const std::vector<KeyOrder> kInteger{KeyOrder::Integer};
const std::vector<KeyOrder> kTextInteger{KeyOrder::Bytes, KeyOrder::Integer};

std::vector<std::string> texts(const KeyList& keys) { return keys.texts(keys.size()); }

}  // namespace

TEST_CASE("recent rows: a horizon is used only while 32-bit xids still tell the rows since it") {
  const std::int64_t two31 = std::int64_t{1} << 31;
  struct Case {
    const char* what;
    std::int64_t since;
    std::int64_t next;
    bool usable;
  };
  const Case cases[] = {
      {"the usual: a few transactions since", 1000, 1500, true},
      {"no transaction since", 1000, 1000, true},
      {"across a 32-bit wrap of the xid", (std::int64_t{1} << 32) - 10, (std::int64_t{1} << 32) + 10, true},
      {"ahead of the server: another server, or one restored from an older copy", 5000, 4000, false},
      {"2^31 behind: the 32-bit comparison would wrap", 1000, 1000 + two31, false},
      {"within the margin below 2^31", 1000, 1000 + two31 - (std::int64_t{1} << 24), false},
      {"just below the margin", 1000, 1000 + two31 - (std::int64_t{1} << 24) - 1, true},
      {"none stored (0)", 0, 1000, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(horizon_usable(c.since, c.next) == c.usable);
  }
  CHECK(xid32((std::int64_t{3} << 32) + 17) == 17);
}

TEST_CASE("recent rows: the recent keys explain the difference only when the rest of both fingerprints agrees") {
  // Fingerprints as the servers combine them: bit_xor of each row's hash.
  const auto print = [](const std::vector<std::uint64_t>& hashes) {
    TableFingerprint f;
    for (std::uint64_t h : hashes) {
      ++f.rows;
      f.combined ^= h;
    }
    return f;
  };
  const auto tally = [](ListStream& stream) {
    HashTally t(stream);
    RowHash row;
    while (*t.next(row)) {
    }
    return t;
  };
  struct Case {
    const char* what;
    std::vector<std::uint64_t> source;  // every row's hash on each side
    std::vector<std::uint64_t> target;
    std::vector<Row> source_recent;  // each side's rows of the recent keys
    std::vector<Row> target_recent;
    bool explains;
  };
  const std::vector<Case> cases = {
      {"a row updated: its key is recent on the source", {1, 2, 30}, {1, 2, 3}, {{{"3"}, 30}}, {{{"3"}, 3}}, true},
      {"a row inserted", {1, 2, 3, 4}, {1, 2, 3}, {{{"4"}, 4}}, {}, true},
      {"a target row changed by hand: recent on the target", {1, 2, 3}, {1, 20, 3}, {{{"2"}, 2}}, {{{"2"}, 20}}, true},
      {"a row deleted: no row is left to be recent", {1, 2}, {1, 2, 3}, {}, {}, false},
      {"an update beside a delete", {1, 20}, {1, 2, 3}, {{{"2"}, 20}}, {{{"2"}, 2}}, false},
      {"a change no row was written for (an enum renamed)", {1, 2, 9}, {1, 2, 3}, {}, {}, false},
      {"an update recent, another row changed without a write", {10, 2, 9}, {1, 2, 3}, {{{"1"}, 10}}, {{{"1"}, 1}},
       false},
      {"a delete beside an insert", {1, 2, 4}, {1, 2, 3}, {{{"4"}, 4}}, {}, false},
      {"the counts agree, the hashes do not", {1, 2, 5}, {1, 2, 3}, {{{"2"}, 2}}, {{{"2"}, 2}}, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    ListStream source(c.source_recent, kInteger);
    ListStream target(c.target_recent, kInteger);
    CHECK(recent_rows_explain(print(c.source), print(c.target), tally(source), tally(target)) == c.explains);
  }
}

TEST_CASE("recent rows: the union of both sides' recent keys, each once, in key order") {
  SUBCASE("interleaved, with keys on both sides") {
    ListStream a({{{"1"}, 0}, {{"4"}, 0}, {{"9"}, 0}}, kInteger);
    ListStream b({{{"2"}, 0}, {{"4"}, 0}, {{"10"}, 0}}, kInteger);
    const auto keys = union_keys(a, b, kInteger, 100);
    REQUIRE(keys);
    REQUIRE(*keys);
    CHECK(texts(**keys) == std::vector<std::string>{"(1)", "(2)", "(4)", "(9)", "(10)"});
  }
  SUBCASE("composite keys of text and integer, NULL last, text by its bytes") {
    ListStream a({{{"a", "2"}, 0}, {{"b", "~"}, 0}}, kTextInteger);
    ListStream b({{{"B", "1"}, 0}, {{"a", "2"}, 0}, {{"a", "~"}, 0}}, kTextInteger);
    const auto keys = union_keys(a, b, kTextInteger, 100);
    REQUIRE(keys);
    REQUIRE(*keys);
    CHECK((**keys).size() == 4);
    CHECK((**keys).holds_null(1));
    CHECK(texts(**keys) == std::vector<std::string>{"(B,1)", "(a,2)", "(a,)", "(b,)"});
  }
  SUBCASE("one side empty") {
    ListStream a({}, kInteger);
    ListStream b({{{"7"}, 0}}, kInteger);
    const auto keys = union_keys(a, b, kInteger, 100);
    REQUIRE(keys);
    REQUIRE(*keys);
    CHECK(texts(**keys) == std::vector<std::string>{"(7)"});
  }
  SUBCASE("past the limit: nothing, both streams read to their end") {
    ListStream a({{{"1"}, 0}, {{"2"}, 0}, {{"3"}, 0}}, kInteger);
    ListStream b({{{"4"}, 0}}, kInteger);
    const auto keys = union_keys(a, b, kInteger, 3);
    REQUIRE(keys);
    CHECK_FALSE(*keys);
    RowHash row;
    CHECK_FALSE(*a.next(row));
    CHECK_FALSE(*b.next(row));
  }
  SUBCASE("exactly at the limit") {
    ListStream a({{{"1"}, 0}, {{"2"}, 0}}, kInteger);
    ListStream b({{{"2"}, 0}, {{"3"}, 0}}, kInteger);
    const auto keys = union_keys(a, b, kInteger, 3);
    REQUIRE(keys);
    CHECK(*keys);
  }
  SUBCASE("a stream out of order: nothing") {
    ListStream a({{{"5"}, 0}, {{"1"}, 0}}, kInteger);
    ListStream b({}, kInteger);
    const auto keys = union_keys(a, b, kInteger, 100);
    REQUIRE(keys);
    CHECK_FALSE(*keys);
  }
  SUBCASE("a stream that fails: its error") {
    ListStream a({{{"1"}, 0}, {{"2"}, 0}}, kInteger, 1);
    ListStream b({}, kInteger);
    const auto keys = union_keys(a, b, kInteger, 100);
    REQUIRE_FALSE(keys);
    CHECK(keys.error() == "the session was lost");
  }
  SUBCASE("the limit for a table's size") {
    CHECK(recent_keys_limit(0) == 1000);
    CHECK(recent_keys_limit(1000000) == 250000);
    CHECK(recent_keys_limit(100000000) == 1000000);
  }
}

}  // namespace tidemark
