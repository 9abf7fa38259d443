#include "core/sql/row_fingerprint.h"

#include <regex>

namespace tidemark {

FingerprintHash fingerprint_hash(const FingerprintColumn& column) {
  if (column.source_type.empty() || column.source_type != column.target_type) return FingerprintHash::Text;
  // Not `time with time zone` (its hash ignores the zone's name), nor
  // character(n), whose hash ignores trailing blanks.
  static const std::regex kValue(
      "smallint|integer|bigint|uuid|boolean|date|bytea|"
      "(timestamp|time)(\\([0-6]\\))? without time zone|timestamp(\\([0-6]\\))? with time zone");
  static const std::regex kCollated("text|character varying(\\([0-9]+\\))?");
  if (std::regex_match(column.source_type, kValue)) return FingerprintHash::Value;
  if (std::regex_match(column.source_type, kCollated)) return FingerprintHash::Collated;
  return FingerprintHash::Text;
}

std::string fingerprint_sql(const QualifiedName& table, const std::vector<FingerprintColumn>& columns,
                            bool hash_record) {
  std::string fields;
  for (const FingerprintColumn& c : columns) {
    std::string field = quote_identifier(c.name);
    if (hash_record) {
      switch (fingerprint_hash(c)) {
        case FingerprintHash::Value: break;
        case FingerprintHash::Collated: field += " COLLATE \"C\""; break;
        case FingerprintHash::Text: field += "::text COLLATE \"C\""; break;
      }
    }
    fields += (fields.empty() ? "" : ", ") + field;
  }
  // hash_record_extended combines its fields' hashes linearly; the second
  // hash mixes that before rows are combined by bit_xor, which is linear too.
  const std::string combined =
      hash_record ? "bit_xor(hashint8extended(hash_record_extended(ROW(" + fields + "), 0), 0))"
                  : "sum(hashtextextended(ROW(" + fields + ")::text, 0))";
  return "SELECT count(*), coalesce(" + combined + ", 0)::text FROM " + table.quoted();
}

}  // namespace tidemark
