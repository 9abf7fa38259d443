#include "core/config/config_reader.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/time/duration.h"

namespace tidemark {
namespace {

std::string yaml_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Scalar: return "\"" + node.Scalar() + "\"";
    default: return "nothing";
  }
}

bool is_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (!first && (c == '.' || c == '-'));
}

}  // namespace

void ConfigReader::error(const YAML::Node& at, const std::string& message) { error(at.Mark(), message); }

void ConfigReader::error(const YAML::Mark& at, const std::string& message) {
  ConfigError e;
  e.file = file_;
  if (!at.is_null()) {
    e.line = at.line + 1;
    e.column = at.column + 1;
  }
  e.key_path = path();
  e.message = message;
  errors_.push_back(std::move(e));
}

SourceLocation ConfigReader::location(const YAML::Node& node) const {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {file_, 0, 0};
  return {file_, mark.line + 1, mark.column + 1};
}

std::string ConfigReader::path() const {
  std::string out;
  for (const std::string& segment : path_) {
    if (!out.empty() && segment.front() != '[') out += '.';
    out += segment;
  }
  return out;
}

bool ConfigReader::expect_map(const YAML::Node& node) {
  if (node.IsMap()) return true;
  error(node, "expected a map of keys, got " + yaml_kind(node));
  return false;
}

std::vector<ConfigReader::MapEntry> ConfigReader::map_entries(const YAML::Node& node) {
  std::vector<MapEntry> entries;
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key_node = it->first;
    if (!key_node.IsScalar()) {
      error(key_node, "expected a plain key, got " + yaml_kind(key_node));
      continue;
    }
    const std::string key = key_node.Scalar();
    if (!seen.insert(key).second) {
      Scope scope(*this, key);
      error(key_node, "duplicate key \"" + key + "\"");
      continue;
    }
    entries.push_back({key, key_node, it->second});
  }
  return entries;
}

void ConfigReader::read_named_entries(
    const YAML::Node& node, const std::function<void(const std::string&, const YAML::Node&)>& read_entry) {
  if (!expect_map(node)) return;
  for (const MapEntry& entry : map_entries(node)) {
    Scope scope(*this, entry.key);
    if (read_name(*this, entry.key_node)) read_entry(entry.key, entry.value);
  }
}

void ConfigReader::read_entries(
    const YAML::Node& node,
    const std::function<void(const std::string&, const YAML::Node&, const YAML::Node&)>& read_entry) {
  if (!expect_map(node)) return;
  for (const MapEntry& entry : map_entries(node)) read_entry(entry.key, entry.key_node, entry.value);
}

void ConfigReader::read_list(const YAML::Node& node, const std::function<void(const YAML::Node&)>& read_item) {
  if (!node.IsSequence()) {
    error(node, "expected a list, got " + yaml_kind(node));
    return;
  }
  if (node.size() == 0) {
    error(node, "expected a non-empty list");
    return;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    Scope scope(*this, "[" + std::to_string(i) + "]");
    read_item(node[i]);
  }
}

std::optional<std::string> read_string(ConfigReader& r, const YAML::Node& node) {
  if (!node.IsScalar()) {
    r.error(node, "expected a text value, got " + yaml_kind(node));
    return std::nullopt;
  }
  if (node.Scalar().empty()) {
    r.error(node, "expected a non-empty value");
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<bool> read_bool(ConfigReader& r, const YAML::Node& node) {
  const auto text = read_string(r, node);
  if (!text) return std::nullopt;
  if (*text == "true") return true;
  if (*text == "false") return false;
  r.error(node, "\"" + *text + "\" is not true or false");
  return std::nullopt;
}

std::optional<std::string> read_name(ConfigReader& r, const YAML::Node& node) {
  auto text = read_string(r, node);
  if (!text) return std::nullopt;
  bool ok = text->size() <= 63;
  for (std::size_t i = 0; ok && i < text->size(); ++i) ok = is_name_char((*text)[i], i == 0);
  if (!ok) {
    r.error(node, "\"" + *text +
                      "\" is not a valid name: use letters, digits, _ . and - (not first), at most 63 characters");
    return std::nullopt;
  }
  return text;
}

std::optional<std::int64_t> read_integer(ConfigReader& r, const YAML::Node& node, std::int64_t min,
                                         std::int64_t max) {
  auto text = read_string(r, node);
  if (!text) return std::nullopt;
  std::int64_t value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < min || value > max) {
    r.error(node, "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                      ", got \"" + *text + "\"");
    return std::nullopt;
  }
  return value;
}

std::optional<std::chrono::seconds> read_duration(ConfigReader& r, const YAML::Node& node,
                                                  std::chrono::seconds min) {
  const auto d = read_parsed(r, node, parse_duration);
  if (d && *d < min) {
    r.error(node, "must be at least " + format_duration(min) + ", got \"" + node.Scalar() + "\"");
    return std::nullopt;
  }
  return d;
}

std::optional<CursorSpan> read_cursor_span(ConfigReader& r, const YAML::Node& node, bool allow_zero) {
  auto text = read_string(r, node);
  if (!text) return std::nullopt;
  const bool is_count = std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; });
  CursorSpan span;
  if (is_count) {
    constexpr std::int64_t kMaxCount = 1'000'000'000'000'000LL;
    const auto count = read_integer(r, node, 0, kMaxCount);
    if (!count) return std::nullopt;
    span = {CursorSpan::Kind::Count, *count};
  } else {
    auto d = parse_duration(*text);
    if (!d) {
      r.error(node, d.error() + " (or a plain count for an integer cursor)");
      return std::nullopt;
    }
    span = {CursorSpan::Kind::Duration, d->count()};
  }
  if (!allow_zero && span.is_zero()) {
    r.error(node, "must be positive, got \"" + *text + "\"");
    return std::nullopt;
  }
  return span;
}

std::optional<std::string> read_column(ConfigReader& r, const YAML::Node& node) {
  return read_parsed(r, node, parse_identifier);
}

std::optional<std::vector<std::string>> read_column_list(ConfigReader& r, const YAML::Node& node) {
  const std::size_t errors_before = r.error_count();
  std::vector<std::string> columns;
  r.read_list(node, [&](const YAML::Node& item) {
    auto column = read_column(r, item);
    if (!column) return;
    if (std::find(columns.begin(), columns.end(), *column) != columns.end()) {
      r.error(item, "column \"" + *column + "\" is listed twice");
      return;
    }
    columns.push_back(std::move(*column));
  });
  if (r.error_count() != errors_before) return std::nullopt;
  return columns;
}

std::optional<QualifiedName> read_table_name(ConfigReader& r, const YAML::Node& node) {
  return read_parsed(r, node, QualifiedName::parse);
}

}  // namespace tidemark
