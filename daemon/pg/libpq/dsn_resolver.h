// Turns a configured connection into its libpq connection string: inline,
// from an environment variable, or from a file (first line, trimmed).
// Reads the environment and the file system; thread-safe.
#pragma once

#include <string>

#include "core/config/config_model.h"

namespace tidemark {

// The most a dsn_file may hold: it is one line, the DSN.
inline constexpr long kMaxDsnFileBytes = 64 * 1024;

// A relative dsn_file is read from `base_dir` (the daemon file's folder,
// as pipelines_dir is); it must be a regular file of at most
// kMaxDsnFileBytes (never a FIFO or a device, which could block or never
// end). Throws std::runtime_error naming the connection and the file
// (never the DSN) and saying why: the variable is unset, or the file is
// missing, unreadable, not a regular file, too large or empty.
std::string resolve_dsn(const ConnectionConfig& connection, const std::string& base_dir);

}  // namespace tidemark
