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
// errors of all files, not just the first. The same as assemble_config of
// each file's parse_pipeline_file, in order.
ParseOutcome<Config> parse_config(const DaemonConfig& daemon, const std::vector<ConfigText>& pipeline_files,
                                  DaemonCheck daemon_check = DaemonCheck::Connections);

// One pipeline file parsed on its own, before the files are checked
// together: independent of every other file, so that several can be
// parsed at once (YAML parsing is most of a large configuration's load).
struct PipelineFileOutcome {
  std::string path;
  std::optional<PipelineConfig> pipeline;  // set when the file has no error of its own
  std::string name;       // the pipeline's name, also from a file with errors
  SourceLocation name_at;  // where the name is written
  std::vector<ConfigError> errors;
};
PipelineFileOutcome parse_pipeline_file(const DaemonConfig& daemon, const ConfigText& file,
                                        DaemonCheck daemon_check = DaemonCheck::Connections);

// The files together, in order: unique pipeline names, inputs resolved,
// target tables no two tables would both replace.
ParseOutcome<Config> assemble_config(const DaemonConfig& daemon, std::vector<PipelineFileOutcome> files);

}  // namespace tidemark
