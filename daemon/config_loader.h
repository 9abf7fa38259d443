// Reads tidemark.yaml and every *.yaml in its pipelines_dir from disk and
// hands the text to core's parser. Stateless; safe from any thread.
#pragma once

#include <string>

#include "core/config/config_parser.h"

namespace tidemark {

// The most one configuration file may hold.
inline constexpr long kMaxConfigFileBytes = 4 * 1024 * 1024;

// Loads the whole configuration, the web configuration file that
// metrics.web_config names included. File-system problems (missing file,
// unreadable folder, a *.yaml in pipelines_dir that is not a regular file,
// a file over kMaxConfigFileBytes) come back as ConfigErrors like any other
// problem, so callers print them the same way. Errors in the daemon file do
// not stop the pipeline files from being checked. Never throws.
ParseOutcome<Config> load_config(const std::string& daemon_config_path);

// The file metrics.web_config names, resolved against the daemon file's
// folder; empty when there is none.
std::string web_config_path(const DaemonConfig& daemon);

// The folder that pipelines_dir names, resolved against the daemon file's folder.
std::string pipelines_dir_path(const DaemonConfig& daemon);

}  // namespace tidemark
