#include "daemon/dsn_resolver.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tidemark {

std::string resolve_dsn(const ConnectionConfig& connection, const std::string& base_dir) {
  switch (connection.source) {
    case DsnSource::Inline: return connection.value;
    case DsnSource::Environment: {
      const char* value = std::getenv(connection.value.c_str());
      if (value == nullptr || *value == '\0') {
        throw std::runtime_error("connection " + connection.name + ": environment variable " + connection.value +
                                 " is not set");
      }
      return value;
    }
    case DsnSource::File: {
      const std::filesystem::path path(connection.value);
      std::ifstream in(path.is_absolute() ? path : std::filesystem::path(base_dir) / path);
      std::string line;
      if (!in || !std::getline(in, line)) {
        throw std::runtime_error("connection " + connection.name + ": cannot read dsn_file " + connection.value);
      }
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (line.empty()) throw std::runtime_error("connection " + connection.name + ": dsn_file is empty");
      return line;
    }
  }
  throw std::logic_error("unknown DSN source");
}

}  // namespace tidemark
