// The row diff's merge, as a table of cases: each row is a source and a
// target stream of (key, hash) and the keys that must come out; then the
// key order itself, the limits, streams out of order and failing streams.
#include <doctest/doctest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/diff/row_diff.h"
#include "diff/list_stream.h"

namespace tidemark {
namespace {

using testing::ListStream;
using testing::Row;

const std::vector<KeyOrder> kIntegerOrder{KeyOrder::Integer};
const std::vector<KeyOrder> kBytesOrder{KeyOrder::Bytes};
const std::vector<KeyOrder> kTextIntegerOrder{KeyOrder::Bytes, KeyOrder::Integer};

RowDiffLimits unlimited() { return RowDiffLimits{1 << 30, std::size_t{1} << 30}; }

RowDiff diff(const std::vector<Row>& source, const std::vector<Row>& target, const std::vector<KeyOrder>& order,
             const RowDiffLimits& limits = unlimited()) {
  ListStream s(source, order);
  ListStream t(target, order);
  auto out = diff_rows(s, t, order, limits);
  REQUIRE(out.ok());
  return std::move(out).value();
}

std::vector<std::string> key_texts(const KeyList& keys) { return keys.texts(1000); }

struct RowDiffCase {
  const char* name;
  std::vector<KeyOrder> order;
  std::vector<Row> source;
  std::vector<Row> target;
  std::vector<std::string> fetch;
  std::vector<std::string> gone;
  RowDiffCounts counts;
};

}  // namespace

TEST_CASE("row diff: what each pair of streams yields") {
  const std::vector<RowDiffCase> cases = {
      {"equal streams yield nothing", kIntegerOrder, {{{"1"}, 7}, {{"2"}, 8}}, {{{"1"}, 7}, {{"2"}, 8}}, {}, {}, {2, 2, 0, 0, 0}},
      {"both empty", kIntegerOrder, {}, {}, {}, {}, {0, 0, 0, 0, 0}},
      {"an empty target: every source key is missing", kIntegerOrder, {{{"1"}, 7}, {{"5"}, 8}}, {}, {"(1)", "(5)"}, {},
       {2, 0, 2, 0, 0}},
      {"an empty source: every target key is gone", kIntegerOrder, {}, {{{"1"}, 7}, {{"5"}, 8}}, {}, {"(1)", "(5)"},
       {0, 2, 0, 0, 2}},
      {"a changed hash is fetched", kIntegerOrder, {{{"1"}, 7}, {{"2"}, 9}, {{"3"}, 1}}, {{{"1"}, 7}, {{"2"}, 8}, {{"3"}, 1}},
       {"(2)"}, {}, {3, 3, 0, 1, 0}},
      {"a key changed: the new one missing, the old one gone", kIntegerOrder, {{{"1"}, 7}, {{"4"}, 8}},
       {{{"1"}, 7}, {{"2"}, 8}}, {"(4)"}, {"(2)"}, {2, 2, 1, 0, 1}},
      {"interleaved: missing, gone and changed in one pass", kIntegerOrder,
       {{{"1"}, 1}, {{"3"}, 3}, {{"4"}, 40}, {{"6"}, 6}, {{"9"}, 9}},
       {{{"2"}, 2}, {{"3"}, 3}, {{"4"}, 4}, {{"7"}, 7}, {{"9"}, 9}, {{"10"}, 10}}, {"(1)", "(4)", "(6)"},
       {"(2)", "(7)", "(10)"}, {5, 6, 2, 1, 3}},
      {"integers compare as numbers, not as text (9 < 10)", kIntegerOrder, {{{"9"}, 1}, {{"10"}, 1}},
       {{{"9"}, 1}, {{"10"}, 2}}, {"(10)"}, {}, {2, 2, 0, 1, 0}},
      {"negative integers come first", kIntegerOrder, {{{"-5"}, 1}, {{"3"}, 1}}, {{{"3"}, 1}}, {"(-5)"}, {},
       {2, 1, 1, 0, 0}},
      {"bytes compare unsigned: 'Z' < 'a' < 'é'", kBytesOrder, {{{"Z"}, 1}, {{"a"}, 1}, {{"\xc3\xa9"}, 1}},
       {{{"Z"}, 1}, {{"\xc3\xa9"}, 2}}, {"(a)", "(\xc3\xa9)"}, {}, {3, 2, 1, 1, 0}},
      {"a NULL key comes last and matches a NULL", kTextIntegerOrder, {{{"a", "1"}, 1}, {{"a", "~"}, 5}},
       {{{"a", "1"}, 1}, {{"a", "~"}, 6}}, {"(a,)"}, {}, {2, 2, 0, 1, 0}},
      {"a composite key compares column by column", kTextIntegerOrder,
       {{{"a", "2"}, 1}, {{"a", "10"}, 1}, {{"b", "1"}, 1}}, {{{"a", "10"}, 1}, {{"b", "1"}, 3}},
       {"(a,2)", "(b,1)"}, {}, {3, 2, 1, 1, 0}},
      {"key text is quoted as ROW(...)::text quotes it", kBytesOrder, {{{"a b"}, 1}, {{"x,\"y"}, 1}}, {},
       {"(\"a b\")", "(\"x,\"\"y\")"}, {}, {2, 0, 2, 0, 0}},
  };
  for (const RowDiffCase& c : cases) {
    CAPTURE(c.name);
    const RowDiff d = diff(c.source, c.target, c.order);
    CHECK(d.gave_up.empty());
    CHECK(key_texts(d.fetch) == c.fetch);
    CHECK(key_texts(d.gone) == c.gone);
    CHECK(d.counts.source_rows == c.counts.source_rows);
    CHECK(d.counts.target_rows == c.counts.target_rows);
    CHECK(d.counts.missing == c.counts.missing);
    CHECK(d.counts.changed == c.counts.changed);
    CHECK(d.counts.gone == c.counts.gone);
  }
}

TEST_CASE("row diff: compare_keys orders NULL after every value, column by column") {
  KeyField one;
  one.integer = 1;
  KeyField two;
  two.integer = 2;
  KeyField null;
  null.null = true;
  CHECK(compare_keys({one}, {two}, kIntegerOrder) < 0);
  CHECK(compare_keys({two}, {one}, kIntegerOrder) > 0);
  CHECK(compare_keys({two}, {null}, kIntegerOrder) < 0);
  CHECK(compare_keys({null}, {null}, kIntegerOrder) == 0);
  KeyField a;
  a.bytes = "a";
  KeyField ab;
  ab.bytes = "ab";
  CHECK(compare_keys({a}, {ab}, kBytesOrder) < 0);  // a prefix sorts first
  CHECK(compare_keys({a, two}, {a, one}, kTextIntegerOrder) > 0);
}

TEST_CASE("row diff: keys come back as JSON for the statements, in batches") {
  KeyList keys(kTextIntegerOrder);
  KeyField text;
  text.bytes = "say \"hi\"";
  KeyField number;
  number.integer = -42;
  KeyField null;
  null.null = true;
  keys.add({text, number});
  keys.add({text, null});
  keys.add({null, number});
  CHECK(keys.size() == 3);
  KeyList::Cursor at;
  CHECK(keys.next_json(at, {"name", "n"}, 2) ==
        "[{\"name\":\"say \\\"hi\\\"\",\"n\":\"-42\"},{\"name\":\"say \\\"hi\\\"\",\"n\":null}]");
  CHECK(keys.next_json(at, {"name", "n"}, 2) == "[{\"name\":null,\"n\":\"-42\"}]");
  CHECK(keys.next_json(at, {"name", "n"}, 2).empty());
}

TEST_CASE("row diff: past its limits it stops collecting but reads both streams to their end") {
  std::vector<Row> source;
  std::vector<Row> target;
  for (int i = 0; i < 100; ++i) {
    source.push_back({{std::to_string(i)}, 1});
    target.push_back({{std::to_string(i)}, static_cast<std::uint64_t>(i < 50 ? 2 : 1)});
  }
  SUBCASE("too many differences") {
    const RowDiff d = diff(source, target, kIntegerOrder, RowDiffLimits{10, std::size_t{1} << 20});
    CHECK(d.gave_up == "more than 10 rows differ");
    CHECK(d.counts.source_rows == 100);
    CHECK(d.counts.target_rows == 100);
    CHECK(d.counts.changed == 50);  // counted to the end
    CHECK(d.fetch.size() == 11);    // collected up to the limit
  }
  SUBCASE("too many bytes of keys") {
    const RowDiff d = diff(source, target, kIntegerOrder, RowDiffLimits{1000, 90});
    CHECK(d.gave_up == "the differing keys take more than 90 bytes");
    CHECK(d.counts.target_rows == 100);
  }
  SUBCASE("the limits of a table: a third of its rows, at least 10,000") {
    CHECK(row_diff_limits(3000000).max_differences == 1000000);
    CHECK(row_diff_limits(3000).max_differences == 10000);
    CHECK(row_diff_limits(0).max_differences == 10000);
  }
}

TEST_CASE("row diff: a stream out of key order or with a key twice makes it give up, not guess") {
  SUBCASE("out of order") {
    const RowDiff d = diff({{{"1"}, 1}, {{"3"}, 1}, {{"2"}, 1}}, {{{"1"}, 1}, {{"2"}, 1}, {{"3"}, 1}}, kIntegerOrder);
    CHECK(d.gave_up == "the source's keys did not arrive in ascending order without repeats");
    CHECK(d.counts.source_rows == 3);
  }
  SUBCASE("a key twice") {
    const RowDiff d = diff({{{"1"}, 1}}, {{{"a"}, 1}, {{"a"}, 1}}, kBytesOrder);
    CHECK(d.gave_up == "the target's keys did not arrive in ascending order without repeats");
  }
}

TEST_CASE("row diff: a failing stream fails the diff") {
  ListStream s({{{"1"}, 1}, {{"2"}, 1}}, kIntegerOrder);
  ListStream t({{{"1"}, 1}, {{"2"}, 1}}, kIntegerOrder, 1);
  const auto d = diff_rows(s, t, kIntegerOrder, unlimited());
  REQUIRE_FALSE(d.ok());
  CHECK(d.error() == "the session was lost");
}

}  // namespace tidemark

#include "core/diff/key_blocks.h"

namespace tidemark {

TEST_CASE("key blocks: about 16 rows a block over the key's range, never past bigint") {
  struct RowDiffCase {
    const char* name;
    std::int64_t min;
    std::int64_t max;
    std::int64_t rows;
    std::optional<KeyBlocks> blocks;
  };
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const RowDiffCase cases[] = {
      {"dense ids", 1, 1000000, 1000000, KeyBlocks{1, 16, 62500}},
      {"sparse ids: wider blocks", 0, 9999999, 1000000, KeyBlocks{0, 160, 62500}},
      {"fewer rows than a block: one block", 5, 7, 3, KeyBlocks{5, 3, 1}},
      {"one key", 42, 42, 1, KeyBlocks{42, 1, 1}},
      {"negative keys", -100, 99, 200, KeyBlocks{-100, 17, 12}},
      {"up to the largest bigint", kMax - 32, kMax - 1, 32, KeyBlocks{kMax - 32, 16, 2}},
      {"a last block ending one past the largest bigint", kMax - 31, kMax, 32, std::nullopt},
      {"a range wider than a bigint holds", kMin, kMax, 1000, std::nullopt},
      {"half the bigints from the smallest", kMin, -1, 1 << 20, KeyBlocks{kMin, std::int64_t{1} << 47, 65536}},
      {"half the bigints in one block, as wide as no bigint is", kMin, -1, 10, std::nullopt},
      {"blocks that would end past the largest bigint", kMax - 9, kMax, 48, std::nullopt},
      {"max below min", 5, 4, 10, std::nullopt},
  };
  for (const RowDiffCase& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const auto b = key_blocks(c.min, c.max, c.rows);
    REQUIRE(b.has_value() == c.blocks.has_value());
    if (!b) continue;
    CHECK(b->origin == c.blocks->origin);
    CHECK(b->width == c.blocks->width);
    CHECK(b->count == c.blocks->count);
  }
}

TEST_CASE("key blocks: the blocks that differ are the union of both lists, NULL said apart") {
  const std::vector<KeyOrder> one{KeyOrder::Integer};
  KeyList fetch(one);
  KeyList gone(one);
  const auto add = [](KeyList& list, std::optional<std::int64_t> v) {
    KeyField f;
    f.null = !v;
    f.integer = v.value_or(0);
    list.add({f});
  };
  add(fetch, 1);
  add(fetch, 5);
  add(gone, 2);
  add(gone, 5);
  add(gone, std::nullopt);
  bool null_block = false;
  CHECK(differing_blocks(fetch, gone, null_block) == std::vector<std::int64_t>{1, 2, 5});
  CHECK(null_block);
}

}  // namespace tidemark
