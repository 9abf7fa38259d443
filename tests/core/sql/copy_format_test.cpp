#include <doctest/doctest.h>

#include "core/sql/copy_format.h"

namespace tidemark {

TEST_CASE("COPY is binary only when both sides read every column the same way") {
  const std::vector<CopyColumnType> source{{"bigint", true}, {"numeric(12,2)", true}, {"timestamp with time zone", true}};
  CHECK(choose_copy_format(source, source, true) == CopyFormat::Binary);
  // Another major version on one side: binary formats are not promised to match.
  CHECK(choose_copy_format(source, source, false) == CopyFormat::Text);

  // A column of another type on the target (text would convert, binary would misread).
  std::vector<CopyColumnType> target = source;
  target[0].name = "integer";
  CHECK(choose_copy_format(source, target, true) == CopyFormat::Text);
  // Only the typmod differs: text applies the target's, so text it is.
  target = source;
  target[1].name = "numeric(14,2)";
  CHECK(choose_copy_format(source, target, true) == CopyFormat::Text);

  // A type of the database's own (an enum, a domain, a composite, an
  // extension's) has a different OID in each database, or no binary I/O.
  target = source;
  target[2].portable_binary = false;
  CHECK(choose_copy_format(source, target, true) == CopyFormat::Text);
  std::vector<CopyColumnType> custom = source;
  custom[1] = {"mood", false};
  CHECK(choose_copy_format(custom, custom, true) == CopyFormat::Text);

  // Nothing known, or lists that do not line up.
  CHECK(choose_copy_format({}, {}, true) == CopyFormat::Text);
  CHECK(choose_copy_format(source, {source[0], source[1]}, true) == CopyFormat::Text);
}

TEST_CASE("regression: a column appended by the chunk's own unit of work kept binary COPY with a stale target") {
  // The target's check ran before the column was appended: it does not
  // know it, so that chunk goes in text.
  TargetCopyTypes target;
  target.same_major_version = true;
  target.columns = {{"id", "bigint", true}, {"at", "timestamp with time zone", true}};
  const std::vector<ColumnShape> source{
      {"id", "bigint", true}, {"at", "timestamp with time zone", true}, {"note", "text", true}};
  CHECK(target.format_for({"id", "at"}, source) == CopyFormat::Binary);
  CHECK(target.format_for({"id", "at", "note"}, source) == CopyFormat::Text);
  target.columns.push_back({"note", "text", true});
  CHECK(target.format_for({"id", "at", "note"}, source) == CopyFormat::Binary);
  // A column the source no longer has comes without a type.
  CHECK(target.format_for({"id", "at", "note"}, {source[0], source[1]}) == CopyFormat::Text);
}

}  // namespace tidemark
