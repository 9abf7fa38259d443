#include "core/sql/key_equality.h"

#include <doctest/doctest.h>

namespace tidemark {
namespace {

ColumnShape key_column(const std::string& type, const std::string& collation = "") {
  ColumnShape c{"k", type};
  c.nondeterministic_collation = collation;
  return c;
}

}  // namespace

TEST_CASE("key equality: a target that merges what the source keeps apart is named, every other pairing passes") {
  struct Row {
    const char* source;
    const char* source_collation;
    const char* target;
    const char* target_collation;
    const char* refused;  // part of the reason; nullptr: accepted
  };
  const Row rows[] = {
      {"text", "", "text", "", nullptr},
      {"text", "", "text", "\"und-ci\"", "collation \"und-ci\""},
      {"text", "\"und-ci\"", "text", "\"und-ci\"", nullptr},
      {"text", "\"und-ci\"", "text", "", nullptr},  // finer: the source holds one of them only
      {"character varying(5)", "", "character(5)", "", "ignores trailing blanks"},
      {"text", "", "character(10)", "", "ignores trailing blanks"},
      {"character(5)", "", "character(5)", "", nullptr},
      {"character varying(5)", "", "text", "", nullptr},
      {"integer", "", "bigint", "", nullptr},
      {"bigint", "", "integer", "", nullptr},  // out of range fails the load, never merges
      {"numeric", "", "numeric(10,2)", "", "rounds"},
      {"numeric(12,4)", "", "numeric(12,2)", "", "rounds"},
      {"numeric(10,2)", "", "numeric(12,4)", "", nullptr},
      {"numeric(10,2)", "", "numeric", "", nullptr},
      {"double precision", "", "real", "", "rounds"},
      {"numeric(10,2)", "", "integer", "", "rounds"},
      {"timestamp(6) with time zone", "", "timestamp(3) with time zone", "", "rounds"},
      {"timestamp with time zone", "", "timestamp(0) with time zone", "", "rounds"},
      {"timestamp(3) with time zone", "", "timestamp with time zone", "", nullptr},
      {"timestamp(3) without time zone", "", "timestamp(3) with time zone", "", nullptr},
      {"uuid", "", "text", "", nullptr},
      {"numeric(19,0)", "", "bigint", "", nullptr},  // nothing to round; out of range fails the load
      {"integer", "", "real", "", "rounds"},
      {"bigint", "", "double precision", "", "rounds"},
      {"integer", "", "double precision", "", nullptr},
      {"timestamp with time zone", "", "date", "", "rounds"},
      {"timestamp with time zone", "", "timestamp without time zone", "", nullptr},  // exact in UTC
      {"timestamp without time zone", "", "timestamp with time zone", "", nullptr},
      {"text", "", "character varying(10)", "", nullptr},  // a longer value fails the load
      {"character varying(5)", "", "character varying(10)", "", nullptr},
      {"text", "", "bpchar", "", "ignores trailing blanks"},
      {"text", "", "public.citext", "", "case-insensitively"},
      {"public.citext", "", "public.citext", "", nullptr},
      {"ext.citext", "", "public.citext", "", nullptr},
  };
  for (const Row& row : rows) {
    CAPTURE(row.source);
    CAPTURE(row.target);
    const auto why = coarser_key_equality(key_column(row.source, row.source_collation), key_column(row.target, row.target_collation));
    if (row.refused == nullptr) {
      CHECK_FALSE(why.has_value());
    } else {
      REQUIRE(why.has_value());
      CHECK(why->find(row.refused) != std::string::npos);
    }
  }
}

}  // namespace tidemark

namespace tidemark {
namespace {

ColumnShape labelled(const std::string& type, std::vector<std::string> labels) {
  ColumnShape c{"tier", "app.tier"};
  c.enum_type = type;
  c.enum_labels = std::move(labels);
  return c;
}

}  // namespace

TEST_CASE("enum labels: a label renamed or added on the source is named with the ALTER TYPE that brings it") {
  const ColumnShape target = labelled("wh.tier", {"bronze", "silver", "gold"});
  CHECK_FALSE(missing_enum_labels(labelled("app.tier", {"bronze", "silver", "gold"}), target));
  CHECK_FALSE(missing_enum_labels(labelled("app.tier", {"bronze", "gold"}), target));  // the target has more
  CHECK(missing_enum_labels(labelled("app.tier", {"bronze", "silver", "platinum"}), target).value_or("") ==
        "enum wh.tier lacks label 'platinum' of the source's app.tier, which has 'gold' no longer: it was renamed "
        "there; rename it here too (ALTER TYPE wh.tier RENAME VALUE 'gold' TO 'platinum')");
  CHECK(missing_enum_labels(labelled("app.tier", {"bronze", "silver", "gold", "it's new", "vip"}), target)
            .value_or("") ==
        "enum wh.tier lacks labels 'it''s new', 'vip' of the source's app.tier, so rows with them cannot be written: "
        "add them (ALTER TYPE wh.tier ADD VALUE 'it''s new'; ALTER TYPE wh.tier ADD VALUE 'vip')");
  ColumnShape text{"tier", "text"};
  CHECK_FALSE(missing_enum_labels(labelled("app.tier", {"x"}), text));  // a text target takes any label
}

}  // namespace tidemark
