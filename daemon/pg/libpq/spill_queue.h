// A first-in first-out queue of byte messages: up to a bound in memory,
// the rest in an unlinked file read back in order. A stream read ahead of
// its consumer (daemon/pg/libpq/read_together.h) can run a whole table
// ahead; its memory stays bounded. Owned by one reader, on its thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tidemark {

class SpillQueue {
 public:
  // Messages past `memory_bound` bytes go to a file made in `directory`
  // when the first of them arrives.
  SpillQueue(std::size_t memory_bound, std::string directory);
  ~SpillQueue();
  SpillQueue(const SpillQueue&) = delete;
  SpillQueue& operator=(const SpillQueue&) = delete;

  bool empty() const { return memory_messages_ == 0 && file_messages_ == 0; }
  // Appends a copy of `message`. Throws std::system_error when the file
  // cannot be made, written or read.
  void push(std::string_view message);
  // Removes the oldest message and returns it, valid until the next pop
  // (pushes leave it be). Requires !empty(). Throws as push() does.
  std::string_view pop();

  // Bytes written to the file so far, all told.
  std::uint64_t spilled_bytes() const { return spilled_bytes_; }

 private:
  void open_file();
  void flush_writes();
  // At least `n` bytes of the file's unread part in read_buffer_.
  void fill(std::size_t n);
  // Gives the file's read part back to the file system, now and then.
  void release_read();

  std::size_t memory_bound_;
  std::string directory_;

  // Messages in memory: each a 4-byte length then its bytes, from
  // memory_at_ on.
  std::string memory_;
  std::size_t memory_at_ = 0;
  std::size_t memory_messages_ = 0;

  // Messages in the file, all after those in memory.
  int fd_ = -1;
  std::size_t file_messages_ = 0;
  std::uint64_t file_end_ = 0;   // bytes written to the file
  std::uint64_t file_read_ = 0;  // bytes of it read into read_buffer_
  std::uint64_t released_ = 0;   // bytes at its start given back (a hole)
  std::string write_buffer_;     // bytes after file_end_, not written yet
  std::string read_buffer_;
  std::size_t read_at_ = 0;

  std::string popped_;  // the message pop() returned last
  std::uint64_t spilled_bytes_ = 0;
};

// Where read-ahead spills: $TMPDIR when set, else /tmp.
std::string spill_directory();

}  // namespace tidemark
