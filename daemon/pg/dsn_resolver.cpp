#include "daemon/pg/dsn_resolver.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace tidemark {
namespace {

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Reads the first line of a regular file of at most kMaxDsnFileBytes. The
// file is opened without blocking (a FIFO with no writer would wait
// forever) and checked on the opened descriptor, so what is read is what
// was checked.
std::string read_dsn_file(const std::string& connection, const std::filesystem::path& path) {
  const std::string where = "connection " + connection + ": dsn_file " + path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw std::runtime_error(where + " cannot be opened: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw std::runtime_error(where + " cannot be read: " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) {
    throw std::runtime_error(where + " is " + file_kind(info.st_mode) +
                             ": point dsn_file at a regular file holding the DSN on its first line");
  }
  if (info.st_size > kMaxDsnFileBytes) {
    throw std::runtime_error(where + " is " + std::to_string(info.st_size) + " bytes, more than the " +
                             std::to_string(kMaxDsnFileBytes) + " allowed: it should hold one line, the DSN");
  }
  std::string text(static_cast<std::size_t>(kMaxDsnFileBytes) + 1, '\0');
  std::size_t size = 0;
  while (size < text.size()) {
    const ssize_t n = ::read(fd, text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(where + " cannot be read: " + std::strerror(errno));
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  if (size > static_cast<std::size_t>(kMaxDsnFileBytes)) {
    throw std::runtime_error(where + " grew past " + std::to_string(kMaxDsnFileBytes) +
                             " bytes while being read: it should hold one line, the DSN");
  }
  text.resize(size);
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
