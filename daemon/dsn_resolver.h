// Turns a configured connection into its libpq connection string: inline,
// from an environment variable, or from a file (first line, trimmed).
// Reads the environment and the file system; thread-safe.
#pragma once

#include <string>

#include "core/config_model.h"

namespace tidemark {

// A relative dsn_file is read from `base_dir` (the daemon file's folder,
// as pipelines_dir is). Throws std::runtime_error naming the connection
// (never the DSN) when the variable is unset or the file unreadable or empty.
std::string resolve_dsn(const ConnectionConfig& connection, const std::string& base_dir);

}  // namespace tidemark
