// Turns the text of tidemark.yaml and of the pipeline files into a
// validated Config, or into every error found. Reads no files: the daemon
// hands in each file's path (for messages) and text. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_error.h"
#include "core/config/config_model.h"

namespace tidemark {

struct ConfigText {
  std::string path;  // as shown in messages
  std::string text;
};

template <class T>
struct ParseOutcome {
  std::optional<T> value;          // set only when errors is empty
  std::vector<ConfigError> errors;  // in file order
  // Set by parse_daemon_config when there are errors but the file is a
  // map: what could be read (defaults where a key failed), enough to find
  // and check the pipeline files anyway.
  std::optional<T> partial;
};

// Parses tidemark.yaml.
ParseOutcome<DaemonConfig> parse_daemon_config(const ConfigText& file);

// Parses a web configuration file (metrics.web_config; exporter-toolkit's
// format). Its file paths are left as written: the daemon resolves them.
ParseOutcome<WebConfig> parse_web_config(const ConfigText& file);

// Whether the pipeline files' connection names are checked against the
// daemon config: not when the daemon file has errors of its own (its
// connections may be missing only because of them).
enum class DaemonCheck { Connections, WithoutConnections };

// Parses every pipeline file against a valid daemon config: pipeline names
// must be unique across files and connection names must exist. Reports the
// errors of all files, not just the first.
ParseOutcome<Config> parse_config(const DaemonConfig& daemon, const std::vector<ConfigText>& pipeline_files,
                                  DaemonCheck daemon_check = DaemonCheck::Connections);

}  // namespace tidemark
