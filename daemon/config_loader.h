// Reads tidemark.yaml and every *.yaml in its pipelines_dir from disk and
// hands the text to core's parser. Stateless; safe from any thread.
#pragma once

#include <string>

#include "core/config_parser.h"

namespace tidemark {

// Loads the whole configuration. File-system problems (missing file,
// unreadable folder) come back as ConfigErrors like any other problem, so
// callers print them the same way. Never throws.
ParseOutcome<Config> load_config(const std::string& daemon_config_path);

// The folder that pipelines_dir names, resolved against the daemon file's folder.
std::string pipelines_dir_path(const DaemonConfig& daemon);

}  // namespace tidemark
