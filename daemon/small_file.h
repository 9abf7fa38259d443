// A small regular file read whole, the way tidemark reads every file an
// operator names (configuration, DSN files): opened without blocking (a
// FIFO with no writer would wait forever), checked on the opened
// descriptor so that what is read is what was checked, and bounded.
// Free functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>

namespace tidemark {

// Why a file was not read; each caller words it for its own file.
struct SmallFileFailure {
  enum class Kind {
    CannotOpen,  // open(2) failed: `detail` is strerror
    CannotRead,  // fstat(2) or read(2) failed: `detail` is strerror
    NotRegular,  // `detail` is what it is instead ("a folder", "a FIFO", ...)
    TooBig,      // `size` bytes, more than the limit
    Grew,        // grew past the limit while it was read
  };
  Kind kind;
  std::string detail;
  std::int64_t size = 0;
};

// The whole text of the regular file at `path`, at most `max_bytes` long.
std::variant<std::string, SmallFileFailure> read_small_file(const std::filesystem::path& path,
                                                            std::int64_t max_bytes);

// What a file of that type is, in words: "a folder", "a FIFO", "a
// character device", "a block device", "a socket", else "not a regular
// file".
std::string file_type_words(std::filesystem::file_type type);

}  // namespace tidemark
