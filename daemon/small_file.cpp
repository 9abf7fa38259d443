#include "daemon/small_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tidemark {
namespace {

namespace fs = std::filesystem;

fs::file_type type_of(mode_t mode) {
  if (S_ISDIR(mode)) return fs::file_type::directory;
  if (S_ISFIFO(mode)) return fs::file_type::fifo;
  if (S_ISCHR(mode)) return fs::file_type::character;
  if (S_ISBLK(mode)) return fs::file_type::block;
  if (S_ISSOCK(mode)) return fs::file_type::socket;
  return fs::file_type::unknown;
}

SmallFileFailure failure(SmallFileFailure::Kind kind, std::string detail = {}, std::int64_t size = 0) {
  return SmallFileFailure{kind, std::move(detail), size};
}

}  // namespace

std::string file_type_words(std::filesystem::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

std::variant<std::string, SmallFileFailure> read_small_file(const std::filesystem::path& path,
                                                            std::int64_t max_bytes) {
  using Kind = SmallFileFailure::Kind;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return failure(Kind::CannotOpen, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) return failure(Kind::CannotRead, std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return failure(Kind::NotRegular, file_type_words(type_of(info.st_mode)));
  if (info.st_size > max_bytes) return failure(Kind::TooBig, {}, info.st_size);
  // Read by chunks into a string sized for the file as it is now, not for
  // the largest file allowed (a buffer of the limit per file was 400 MiB
  // touched at start-up for 100 pipeline files). One byte past the limit
  // tells a file that grew too big while it was read.
  std::string text;
  text.reserve(static_cast<std::size_t>(std::min<std::int64_t>(info.st_size, max_bytes)) + 1);
  char chunk[16384];
  while (text.size() <= static_cast<std::size_t>(max_bytes)) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failure(Kind::CannotRead, std::strerror(errno));
    if (n == 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  if (text.size() > static_cast<std::size_t>(max_bytes)) return failure(Kind::Grew);
  return text;
}

}  // namespace tidemark
