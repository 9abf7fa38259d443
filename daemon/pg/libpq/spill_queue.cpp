#include "daemon/pg/libpq/spill_queue.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <system_error>

namespace tidemark {
namespace {

using Length = std::uint32_t;
constexpr std::size_t kLength = sizeof(Length);

// The file is written and read in pieces of this size: few system calls,
// little memory.
constexpr std::size_t kFileChunk = std::size_t{1} << 20;

// What was read back goes back to the file system this much at a time: a
// queue that never empties would otherwise keep all it ever spilled.
constexpr std::uint64_t kReleaseEvery = std::uint64_t{64} << 20;

[[noreturn]] void fail(const std::string& what, const std::string& directory) {
  throw std::system_error(errno, std::generic_category(), what + " read-ahead in " + directory);
}

void append_message(std::string& to, std::string_view message) {
  if (message.size() > std::numeric_limits<Length>::max()) std::abort();  // no COPY message is 4 GiB
  const auto length = static_cast<Length>(message.size());
  to.append(reinterpret_cast<const char*>(&length), kLength);
  to.append(message.data(), message.size());
}

Length length_at(const std::string& buffer, std::size_t at) {
  Length length = 0;
  std::memcpy(&length, buffer.data() + at, kLength);
  return length;
}

}  // namespace

SpillQueue::SpillQueue(std::size_t memory_bound, std::string directory)
    : memory_bound_(memory_bound), directory_(std::move(directory)) {}

SpillQueue::~SpillQueue() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillQueue::push(std::string_view message) {
  const bool in_memory = file_messages_ == 0 && memory_.size() - memory_at_ + kLength + message.size() <= memory_bound_;
  if (in_memory) {
    // What was popped is dropped before the buffer grows into it.
    if (memory_at_ > 0 && memory_at_ >= memory_.size() / 2) {
      memory_.erase(0, memory_at_);
      memory_at_ = 0;
    }
    append_message(memory_, message);
    ++memory_messages_;
    return;
  }
  if (fd_ < 0) open_file();
  append_message(write_buffer_, message);
  ++file_messages_;
  spilled_bytes_ += kLength + message.size();
  if (write_buffer_.size() >= kFileChunk) flush_writes();
}

std::string_view SpillQueue::pop() {
  if (memory_messages_ > 0) {
    const Length length = length_at(memory_, memory_at_);
    popped_.assign(memory_, memory_at_ + kLength, length);
    memory_at_ += kLength + length;
    if (--memory_messages_ == 0) {
      memory_.clear();
      memory_at_ = 0;
    }
    return popped_;
  }
  if (file_messages_ == 0) std::abort();  // pop() takes what is there
  fill(kLength);
  const Length length = length_at(read_buffer_, read_at_);
  fill(kLength + length);
  popped_.assign(read_buffer_, read_at_ + kLength, length);
  read_at_ += kLength + length;
  if (--file_messages_ == 0) {
    // Read to its end: the file starts again empty, and messages go to
    // memory again until it is full.
    if (::ftruncate(fd_, 0) != 0) fail("emptying", directory_);
    file_end_ = file_read_ = released_ = 0;
    write_buffer_.clear();
    read_buffer_.clear();
    read_at_ = 0;
  }
  return popped_;
}

void SpillQueue::open_file() {
  fd_ = ::open(directory_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ >= 0) return;
  // A file system without unnamed files: a named one, unlinked at once.
  std::string name = directory_ + "/tidemark-read-ahead-XXXXXX";
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) fail("making a file for", directory_);
  ::unlink(name.c_str());
}

void SpillQueue::flush_writes() {
  std::size_t done = 0;
  while (done < write_buffer_.size()) {
    const ssize_t n = ::pwrite(fd_, write_buffer_.data() + done, write_buffer_.size() - done,
                               static_cast<off_t>(file_end_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing", directory_);
    done += static_cast<std::size_t>(n);
  }
  file_end_ += write_buffer_.size();
  write_buffer_.clear();
}

void SpillQueue::fill(std::size_t n) {
  while (read_buffer_.size() - read_at_ < n) {
    read_buffer_.erase(0, read_at_);
    read_at_ = 0;
    if (file_read_ == file_end_) {
      // The rest was never written: it is taken as it is.
      read_buffer_ += write_buffer_;
      file_end_ += write_buffer_.size();
      file_read_ = file_end_;
      write_buffer_.clear();
      if (read_buffer_.size() < n) std::abort();  // a message is whole once pushed
      continue;
    }
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>(file_end_ - file_read_, std::max(n - read_buffer_.size(), kFileChunk)));
    const std::size_t had = read_buffer_.size();
    read_buffer_.resize(had + want);
    const ssize_t got = ::pread(fd_, read_buffer_.data() + had, want, static_cast<off_t>(file_read_));
    if (got < 0 && errno == EINTR) {
      read_buffer_.resize(had);
      continue;
    }
    if (got <= 0) fail("reading back", directory_);
    read_buffer_.resize(had + static_cast<std::size_t>(got));
    file_read_ += static_cast<std::uint64_t>(got);
    release_read();
  }
}

void SpillQueue::release_read() {
  if (file_read_ - released_ < kReleaseEvery) return;
  const std::uint64_t upto = file_read_ & ~std::uint64_t{4095};  // whole pages
  // Best effort: a file system that cannot punch holes keeps the bytes
  // until the queue empties.
  (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(released_),
                    static_cast<off_t>(upto - released_));
  released_ = upto;
}

std::string spill_directory() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

}  // namespace tidemark
