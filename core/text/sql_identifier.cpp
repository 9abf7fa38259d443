#include "core/text/sql_identifier.h"

#include <cctype>

#include <vector>

namespace tidemark {
namespace {

constexpr std::size_t kMaxIdentifierBytes = 63;

bool is_start_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_inner_char(char c) { return is_start_char(c) || (c >= '0' && c <= '9') || c == '$'; }

// Reads one identifier starting at text[pos]; leaves pos after it.
Result<std::string> read_identifier(std::string_view text, std::size_t& pos) {
  std::string out;
  if (pos < text.size() && text[pos] == '"') {
    ++pos;
    for (;;) {
      if (pos >= text.size()) return Error{"unterminated quoted identifier in \"" + std::string(text) + "\""};
      const char c = text[pos++];
      if (c == '\0') return Error{"identifier contains a NUL byte"};
      if (c == '"') {
        if (pos < text.size() && text[pos] == '"') {
          out += '"';
          ++pos;
          continue;
        }
        break;
      }
      out += c;
    }
    if (out.empty()) return Error{"empty quoted identifier in \"" + std::string(text) + "\""};
  } else {
    if (pos >= text.size() || !is_start_char(text[pos])) {
      return Error{"expected an identifier such as orders or \"Odd Name\", got \"" + std::string(text) + "\""};
    }
    while (pos < text.size() && is_inner_char(text[pos])) {
      char c = text[pos++];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      out += c;
    }
  }
  if (out.size() > kMaxIdentifierBytes) {
    return Error{"identifier \"" + out + "\" is longer than 63 bytes"};
  }
  return out;
}

}  // namespace

std::string quote_identifier(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out += '"';
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string quote_literal(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

Result<std::string> parse_identifier(std::string_view text) {
  std::size_t pos = 0;
  auto id = read_identifier(text, pos);
  if (!id) return id;
  if (pos != text.size()) {
    return Error{"unexpected \"" + std::string(text.substr(pos)) + "\" after identifier in \"" +
                 std::string(text) + "\" (quote names that contain other characters)"};
  }
  return id;
}

Result<QualifiedName> QualifiedName::parse(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  for (;;) {
    auto part = read_identifier(text, pos);
    if (!part) return part.failure();
    parts.push_back(std::move(part).value());
    if (pos == text.size()) break;
    if (text[pos] != '.') {
      return Error{"unexpected \"" + std::string(text.substr(pos)) + "\" in table name \"" +
                   std::string(text) + "\" (quote names that contain other characters)"};
    }
    ++pos;
  }
  if (parts.size() > 2) {
    return Error{"table name \"" + std::string(text) + "\" has more than two parts; use schema.table"};
  }
  if (parts.size() == 1) return QualifiedName(std::nullopt, std::move(parts[0]));
  return QualifiedName(std::move(parts[0]), std::move(parts[1]));
}

std::string QualifiedName::quoted() const {
  return schema_ ? quote_identifier(*schema_) + "." + quote_identifier(name_) : quote_identifier(name_);
}

std::string display_identifier(std::string_view part) {
  bool bare = !part.empty() && (std::islower(static_cast<unsigned char>(part[0])) || part[0] == '_');
  for (const char c : part) {
    const auto u = static_cast<unsigned char>(c);
    bare = bare && (std::islower(u) || std::isdigit(u) || c == '_' || c == '$');
  }
  return bare ? std::string(part) : quote_identifier(part);
}

std::string QualifiedName::display() const {
  return schema_ ? display_identifier(*schema_) + "." + display_identifier(name_) : display_identifier(name_);
}

std::string without_trailing_semicolons(std::string query) {
  while (!query.empty() && (query.back() == ';' || std::isspace(static_cast<unsigned char>(query.back())))) {
    query.pop_back();
  }
  return query;
}

}  // namespace tidemark
