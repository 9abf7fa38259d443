// Turns the text of tidemark.yaml and of the pipeline files into a
// validated Config, or into every error found. Reads no files: the daemon
// hands in each file's path (for messages) and text. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "core/config_model.h"

namespace tidemark {

struct ConfigText {
  std::string path;  // as shown in messages
  std::string text;
};

template <class T>
struct ParseOutcome {
  std::optional<T> value;          // set only when errors is empty
  std::vector<ConfigError> errors;  // in file order
};

// Parses tidemark.yaml.
ParseOutcome<DaemonConfig> parse_daemon_config(const ConfigText& file);

// Parses every pipeline file against a valid daemon config: pipeline names
// must be unique across files and connection names must exist. Reports the
// errors of all files, not just the first.
ParseOutcome<Config> parse_config(const DaemonConfig& daemon, const std::vector<ConfigText>& pipeline_files);

}  // namespace tidemark
