#include "core/sql/row_fingerprint.h"

#include <regex>

namespace tidemark {
namespace {

// The types hashed other than by their text, as format_type() writes
// them. Not `time with time zone` (its hash ignores the zone's name), nor
// character(n), whose hash ignores trailing blanks. The hashes of bigint,
// timestamp and time fold their 64 bits into 32 (hashint8extended), so
// that 1 and 4294967296 hash alike: a bigint adds its high half as a
// field of its own, a timestamp or time goes as its 8 bytes of binary
// send format, hashed as bytes.
struct Rule {
  std::regex type;
  FingerprintHash hash;
  const char* send = nullptr;  // Sent: the type's send function
};

const Rule* rule_for(const std::string& type) {
  static const Rule kRules[] = {
      {std::regex("smallint|integer|uuid|boolean|date|bytea"), FingerprintHash::Value},
      {std::regex("bigint"), FingerprintHash::Halves},
      {std::regex("timestamp(\\([0-6]\\))? with time zone"), FingerprintHash::Sent, "timestamptz_send"},
      {std::regex("timestamp(\\([0-6]\\))? without time zone"), FingerprintHash::Sent, "timestamp_send"},
      {std::regex("time(\\([0-6]\\))? without time zone"), FingerprintHash::Sent, "time_send"},
      {std::regex("text|character varying(\\([0-9]+\\))?"), FingerprintHash::Collated},
  };
  for (const Rule& rule : kRules) {
    if (std::regex_match(type, rule.type)) return &rule;
  }
  return nullptr;
}

// The rule a column is hashed by; nothing (its text) when its type is
// not one of them or differs between the sides.
const Rule* rule_for(const FingerprintColumn& column) {
  if (column.source_type.empty() || column.source_type != column.target_type) return nullptr;
  return rule_for(column.source_type);
}

// The column's field (or fields) in its row's record.
std::string fingerprint_fields(const FingerprintColumn& c) {
  const std::string name = quote_identifier(c.name);
  const Rule* rule = rule_for(c);
  switch (rule ? rule->hash : FingerprintHash::Text) {
    case FingerprintHash::Value: return name;
    case FingerprintHash::Halves: return name + ", (" + name + " >> 32)::integer";
    case FingerprintHash::Sent: return std::string(rule->send) + "(" + name + ")";
    case FingerprintHash::Collated: return name + " COLLATE \"C\"";
    case FingerprintHash::Text: break;
  }
  return name + "::text COLLATE \"C\"";
}

}  // namespace

std::vector<FingerprintColumn> fingerprint_columns(const std::vector<std::string>& names,
                                                   const std::vector<ColumnShape>& source,
                                                   const std::vector<ColumnShape>& target) {
  std::vector<FingerprintColumn> out;
  for (const std::string& name : names) {
    const ColumnShape* in_source = find_column(source, name);
    const ColumnShape* in_target = find_column(target, name);
    out.push_back(FingerprintColumn{name, in_source ? in_source->type : "", in_target ? in_target->type : ""});
  }
  return out;
}

FingerprintHash fingerprint_hash(const FingerprintColumn& column) {
  const Rule* rule = rule_for(column);
  return rule ? rule->hash : FingerprintHash::Text;
}

std::string row_hash_sql(const std::vector<FingerprintColumn>& columns, bool hash_record) {
  std::string fields;
  for (const FingerprintColumn& c : columns) {
    fields += (fields.empty() ? "" : ", ") + (hash_record ? fingerprint_fields(c) : quote_identifier(c.name));
  }
  return hash_record ? "hash_record_extended(ROW(" + fields + "), 0)" : "hashtextextended(ROW(" + fields + ")::text, 0)";
}

std::string mixed_row_hash_sql(const std::vector<FingerprintColumn>& columns, bool hash_record) {
  // hash_record_extended combines its fields' hashes linearly, and bit_xor
  // combines the rows linearly too: each row's hash is mixed in between,
  // by hashing its text (hashint8extended would fold it to 32 bits).
  const std::string row = row_hash_sql(columns, hash_record);
  return hash_record ? "hashtextextended(" + row + "::text, 0)" : row;
}

std::string rows_hash_sql(const std::vector<FingerprintColumn>& columns, bool hash_record, bool rows_repeat) {
  const std::string mixed = mixed_row_hash_sql(columns, hash_record);
  // bit_xor came with PostgreSQL 14; before it, and for rows that may
  // repeat, the rows' sum, exact as numeric, is folded back into a bigint.
  return hash_record && !rows_repeat ? "coalesce(bit_xor(" + mixed + "), 0)"
                                     : "(coalesce(sum(" + mixed + "), 0) % 9223372036854775807)::bigint";
}

std::string fingerprint_sql(const QualifiedName& table, const std::vector<FingerprintColumn>& columns,
                            bool hash_record, bool with_horizon, bool rows_repeat) {
  const std::string horizon =
      with_horizon ? ", pg_snapshot_xmin(pg_current_snapshot())::text, pg_snapshot_xmax(pg_current_snapshot())::text"
                   : "";
  return "SELECT count(*), " + rows_hash_sql(columns, hash_record, rows_repeat) + "::text" + horizon + " FROM " +
         table.quoted();
}

}  // namespace tidemark
