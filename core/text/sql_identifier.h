// SQL identifiers as written in pipeline files: a column (`order_id`,
// `"Odd Name"`) or a table with an optional schema (`public.orders`,
// `raw."Orders;1"`). Parsing follows PostgreSQL: unquoted names fold to
// lower case, quoted ones are kept exactly. Value types; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace tidemark {

// Wraps a name in double quotes, doubling any quote inside, so that every
// name from YAML reaches SQL as an identifier and never as SQL text.
std::string quote_identifier(std::string_view name);

// Wraps text in single quotes, doubling any quote inside: a SQL string
// literal, for the few places that take no parameters.
std::string quote_literal(std::string_view text);

// A query made fit to be a subquery: trailing semicolons (and the blanks
// around them) would end the statement inside the parentheses.
std::string without_trailing_semicolons(std::string query);

// A name as it would be written in the configuration: bare when it reads
// back as itself unquoted (lower case, letters, digits, _ and $), quoted
// otherwise, so what is shown is what runs.
std::string display_identifier(std::string_view name);

// Parses one identifier: unquoted [A-Za-z_][A-Za-z0-9_$]* (folded to lower
// case) or "quoted" with "" for a quote. Fails on empty names, stray
// characters, NUL, or names over 63 bytes (PostgreSQL's NAMEDATALEN).
Result<std::string> parse_identifier(std::string_view text);

class QualifiedName {
 public:
  // Parses `name` or `schema.name`, each part as parse_identifier.
  static Result<QualifiedName> parse(std::string_view text);

  QualifiedName() = default;
  QualifiedName(std::optional<std::string> schema, std::string name)
      : schema_(std::move(schema)), name_(std::move(name)) {}

  const std::optional<std::string>& schema() const { return schema_; }
  const std::string& name() const { return name_; }

  // `"schema"."name"` or `"name"`: safe to splice into SQL text.
  std::string quoted() const;
  // `schema.name` for messages: each part bare when it reads back as
  // itself unquoted (`raw.orders`), quoted otherwise (`public."Odd Name"`,
  // `"We""ird; drop"`), so a message shows the name that runs.
  std::string display() const;

  friend bool operator==(const QualifiedName& a, const QualifiedName& b) {
    return a.schema_ == b.schema_ && a.name_ == b.name_;
  }

 private:
  std::optional<std::string> schema_;
  std::string name_;
};

}  // namespace tidemark
