// Walks one parsed YAML document against the configuration schema and
// collects every error with its file, line, column and key path, so a
// user sees all the problems of a file at once. One reader per file being
// parsed; not thread-safe. The schema tables live in config_schema.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config/config_error.h"
#include "core/config/config_model.h"

namespace tidemark {

class ConfigReader;

template <class Model>
using FieldReader = std::function<void(ConfigReader&, const YAML::Node&, Model&)>;

enum class Presence { Required, Optional };

// One key of a YAML map: its type, default and bounds (in `type`, for
// people) and how its value is checked and stored (in `read`).
template <class Model>
struct KeySpec {
  std::string_view key;
  Presence presence;
  // YAML text read in place of a missing optional key; empty: no default.
  std::string_view default_yaml;
  std::string type;
  std::string description;
  FieldReader<Model> read;
};

// Every key a YAML map may hold, plus checks that span several keys.
template <class Model>
struct MapSchema {
  std::string_view name;  // for the reference docs, e.g. "tables[]"
  std::vector<KeySpec<Model>> keys;
  // Runs after every key was read, even when some failed.
  std::function<void(ConfigReader&, const YAML::Node&, Model&)> check;
};

class ConfigReader {
 public:
  ConfigReader(std::string file, std::vector<ConfigError>& errors)
      : file_(std::move(file)), errors_(errors) {}

  // Records an error at `at` under the current key path.
  void error(const YAML::Node& at, const std::string& message);
  void error(const YAML::Mark& at, const std::string& message);

  SourceLocation location(const YAML::Node& node) const;
  const std::string& file() const { return file_; }
  // The current key path, e.g. "tables[0].deletes", for a check made
  // later, once every file is read (ConfigError::key_path).
  std::string path() const;
  std::size_t error_count() const { return errors_.size(); }

  // Appends a path segment ("tables", "[2]", "lookback") for its lifetime.
  class Scope {
   public:
    Scope(ConfigReader& reader, std::string segment) : reader_(reader) {
      reader_.path_.push_back(std::move(segment));
    }
    ~Scope() { reader_.path_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ConfigReader& reader_;
  };

  // Reads `node` as a map with the keys of `schema` into `model`: unknown,
  // duplicate and missing required keys are errors; defaults fill the rest.
  template <class Model>
  void read_map(const YAML::Node& node, const MapSchema<Model>& schema, Model& model);

  // Reads a map whose keys are names chosen by the user (connections).
  // `read_entry` gets each validated name and its value node.
  void read_named_entries(const YAML::Node& node,
                          const std::function<void(const std::string&, const YAML::Node&)>& read_entry);

  // Reads a map whose keys are any plain text (basic_auth_users): each
  // entry's key, key node and value, duplicates reported and left out.
  // No path segment is added: the caller adds one once the key is known fit to show.
  void read_entries(const YAML::Node& node,
                    const std::function<void(const std::string&, const YAML::Node&, const YAML::Node&)>& read_entry);

  // Reads a non-empty list, calling `read_item` with each item under "[i]".
  void read_list(const YAML::Node& node, const std::function<void(const YAML::Node&)>& read_item);

 private:
  bool expect_map(const YAML::Node& node);
  struct MapEntry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };
  // Entries of `node` in order, reporting (and leaving out) non-scalar and
  // duplicate keys.
  std::vector<MapEntry> map_entries(const YAML::Node& node);

  template <class Model>
  void report_unknown_key(const YAML::Node& key_node, const std::string& key, const MapSchema<Model>& schema);

  std::string file_;
  std::vector<ConfigError>& errors_;
  std::vector<std::string> path_;
};

// Scalar readers: each returns the value, or records an error and returns
// nothing. They never throw.
std::optional<std::string> read_string(ConfigReader& r, const YAML::Node& node);
// true or false, as written (YAML 1.1's yes, no, on and off are refused:
// they read as text in YAML 1.2 and would mean one thing here, another elsewhere).
std::optional<bool> read_bool(ConfigReader& r, const YAML::Node& node);
// A name for a pipeline, table or connection: [A-Za-z0-9_][A-Za-z0-9_.-]*, at most 63.
std::optional<std::string> read_name(ConfigReader& r, const YAML::Node& node);
std::optional<std::int64_t> read_integer(ConfigReader& r, const YAML::Node& node, std::int64_t min,
                                         std::int64_t max);
std::optional<std::chrono::seconds> read_duration(ConfigReader& r, const YAML::Node& node,
                                                  std::chrono::seconds min);
// A duration (time cursors) or a plain count (integer cursors).
std::optional<CursorSpan> read_cursor_span(ConfigReader& r, const YAML::Node& node, bool allow_zero);
std::optional<std::string> read_column(ConfigReader& r, const YAML::Node& node);
std::optional<std::vector<std::string>> read_column_list(ConfigReader& r, const YAML::Node& node);
std::optional<QualifiedName> read_table_name(ConfigReader& r, const YAML::Node& node);

// Reads a text value and parses it with `parse` (text -> Result<T>); a
// parse failure is recorded at the node with the parser's message.
template <class Parse>
auto read_parsed(ConfigReader& r, const YAML::Node& node, Parse parse)
    -> std::optional<typename decltype(parse(std::string()))::value_type> {
  auto text = read_string(r, node);
  if (!text) return std::nullopt;
  auto parsed = parse(*text);
  if (!parsed) {
    r.error(node, parsed.error());
    return std::nullopt;
  }
  return std::move(parsed).value();
}

template <class E>
std::optional<E> read_enum(ConfigReader& r, const YAML::Node& node,
                           const std::vector<std::pair<std::string_view, E>>& choices) {
  const auto text = read_string(r, node);
  if (!text) return std::nullopt;
  std::string allowed;
  for (const auto& [name, value] : choices) {
    if (*text == name) return value;
    allowed += (allowed.empty() ? "" : ", ") + std::string(name);
  }
  r.error(node, "\"" + *text + "\" is not one of: " + allowed);
  return std::nullopt;
}

// Binds a scalar reader to a member of the model: the usual KeySpec::read.
template <class Model, class Member, class Read>
FieldReader<Model> into(Member Model::*member, Read read) {
  return [member, read](ConfigReader& r, const YAML::Node& node, Model& model) {
    if (auto value = read(r, node)) model.*member = std::move(*value);
  };
}

// ---- template definitions ----

template <class Model>
void ConfigReader::report_unknown_key(const YAML::Node& key_node, const std::string& key,
                                      const MapSchema<Model>& schema) {
  std::string allowed;
  for (const auto& spec : schema.keys) allowed += (allowed.empty() ? "" : ", ") + std::string(spec.key);
  Scope scope(*this, key);
  error(key_node, "unknown key \"" + key + "\"; expected one of: " + allowed);
}

template <class Model>
void ConfigReader::read_map(const YAML::Node& node, const MapSchema<Model>& schema, Model& model) {
  if (!expect_map(node)) return;
  std::vector<bool> seen(schema.keys.size(), false);
  for (const MapEntry& entry : map_entries(node)) {
    std::size_t i = 0;
    while (i < schema.keys.size() && schema.keys[i].key != entry.key) ++i;
    if (i == schema.keys.size()) {
      report_unknown_key(entry.key_node, entry.key, schema);
      continue;
    }
    seen[i] = true;
    Scope scope(*this, entry.key);
    schema.keys[i].read(*this, entry.value, model);
  }
  for (std::size_t i = 0; i < schema.keys.size(); ++i) {
    const KeySpec<Model>& spec = schema.keys[i];
    if (seen[i]) continue;
    if (spec.presence == Presence::Required) {
      error(node, "missing required key \"" + std::string(spec.key) + "\" (" + std::string(spec.type) + ")");
    } else if (!spec.default_yaml.empty()) {
      Scope scope(*this, std::string(spec.key));
      spec.read(*this, YAML::Load(std::string(spec.default_yaml)), model);
    }
  }
  if (schema.check) schema.check(*this, node, model);
}

}  // namespace tidemark
