#include "daemon/pg/libpq/dsn_resolver.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <variant>

#include "daemon/small_file.h"

namespace tidemark {
namespace {

// The first line of a regular file of at most kMaxDsnFileBytes.
std::string read_dsn_file(const std::string& connection, const std::filesystem::path& path) {
  using Kind = SmallFileFailure::Kind;
  const std::string where = "connection " + connection + ": dsn_file " + path.string();
  auto read = read_small_file(path, kMaxDsnFileBytes);
  if (const auto* failed = std::get_if<SmallFileFailure>(&read)) {
    switch (failed->kind) {
      case Kind::CannotOpen: throw std::runtime_error(where + " cannot be opened: " + failed->detail);
      case Kind::CannotRead: throw std::runtime_error(where + " cannot be read: " + failed->detail);
      case Kind::NotRegular:
        throw std::runtime_error(where + " is " + failed->detail +
                                 ": point dsn_file at a regular file holding the DSN on its first line");
      case Kind::TooBig:
        throw std::runtime_error(where + " is " + std::to_string(failed->size) + " bytes, more than the " +
                                 std::to_string(kMaxDsnFileBytes) + " allowed: it should hold one line, the DSN");
      case Kind::Grew:
        throw std::runtime_error(where + " grew past " + std::to_string(kMaxDsnFileBytes) +
                                 " bytes while being read: it should hold one line, the DSN");
    }
  }
  const std::string& text = std::get<std::string>(read);
  if (text.empty()) throw std::runtime_error(where + " is empty: write the DSN on its first line");
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) throw std::runtime_error(where + ": its first line is empty: write the DSN on its first line");
  return line;
}

}  // namespace

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
      return read_dsn_file(connection.name, path.is_absolute() ? path : std::filesystem::path(base_dir) / path);
    }
  }
  throw std::logic_error("unknown DSN source");
}

}  // namespace tidemark
