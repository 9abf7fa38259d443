// The spill queue hands its messages back in the order they came, across
// memory and file and back, keeps what it handed out while more arrive,
// and says why when its file cannot be made.
#include "daemon/pg/libpq/spill_queue.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <deque>
#include <string>
#include <system_error>

namespace tidemark {
namespace {

// Message i: i's digits, then as many bytes as `i % 97` says, some of
// them zero (the queue keeps bytes, not text).
std::string message(int i, std::size_t large_every = 0) {
  std::string m = std::to_string(i) + ':';
  const std::size_t extra = large_every != 0 && i % large_every == 0 ? (std::size_t{3} << 20) : i % 97;
  for (std::size_t k = 0; k < extra; ++k) m += static_cast<char>((i + k) % 7);
  return m;
}

}  // namespace

TEST_CASE("spill queue: messages come back in order, whatever part of them went to the file") {
  struct Row {
    const char* case_name;
    std::size_t memory_bound;
    int pushes_per_pop;  // pushes before each pop, while messages remain to push
    std::size_t large_every;  // every so many messages, one of 3 MiB (0: none)
    bool spills;
  };
  const Row rows[] = {
      {"all in memory", std::size_t{64} << 20, 1, 0, false},
      {"a bound of 1 KiB, pushed far ahead of the pops", 1024, 5, 0, true},
      {"a bound of 1 KiB, pops keeping up: memory is used again", 1024, 1, 0, false},
      {"a bound of 1 KiB, two pushes a pop", 1024, 2, 0, true},
      {"messages larger than the bound, and than a file chunk", 4096, 3, 50, true},
      {"no memory at all", 0, 2, 0, true},
  };
  for (const Row& row : rows) {
    INFO(row.case_name);
    SpillQueue queue(row.memory_bound, spill_directory());
    std::deque<std::string> expected;
    const int total = 3000;
    int pushed = 0;
    while (pushed < total || !expected.empty()) {
      for (int k = 0; k < row.pushes_per_pop && pushed < total; ++k) {
        expected.push_back(message(pushed, row.large_every));
        queue.push(expected.back());
        ++pushed;
      }
      REQUIRE_FALSE(queue.empty());
      const std::string_view got = queue.pop();
      REQUIRE(std::string(got) == expected.front());
      expected.pop_front();
    }
    CHECK(queue.empty());
    CHECK((queue.spilled_bytes() > 0) == row.spills);
  }
}

TEST_CASE("spill queue: a message handed out stays whole while more arrive, in memory and from the file") {
  SpillQueue queue(64, spill_directory());
  for (int i = 0; i < 10; ++i) queue.push(message(i));
  const std::string_view first = queue.pop();  // from memory
  const std::string first_copy(first);
  for (int i = 10; i < 200; ++i) queue.push(message(i));
  CHECK(std::string(first) == first_copy);
  for (int i = 1; i < 150; ++i) REQUIRE(std::string(queue.pop()) == message(i));
  const std::string_view from_file = queue.pop();
  const std::string from_file_copy(from_file);
  REQUIRE(from_file_copy == message(150));
  for (int i = 200; i < 400; ++i) queue.push(message(i));
  CHECK(std::string(from_file) == from_file_copy);
  for (int i = 151; i < 400; ++i) REQUIRE(std::string(queue.pop()) == message(i));
  CHECK(queue.empty());
}

TEST_CASE("spill queue: once its file is read to the end, messages go to memory again") {
  SpillQueue queue(256, spill_directory());
  for (int i = 0; i < 100; ++i) queue.push(message(i));
  const std::uint64_t spilled = queue.spilled_bytes();
  REQUIRE(spilled > 0);
  for (int i = 0; i < 100; ++i) REQUIRE(std::string(queue.pop()) == message(i));
  REQUIRE(queue.empty());
  queue.push("small");
  queue.push("again");
  CHECK(queue.spilled_bytes() == spilled);
  CHECK(queue.pop() == "small");
  CHECK(queue.pop() == "again");
}

TEST_CASE("spill queue: a folder it cannot write in fails the push that would spill, naming the folder") {
  SpillQueue queue(16, "/nonexistent/tidemark-spill");
  queue.push("fits");  // memory only: no file yet
  try {
    queue.push("this one goes past the bound");
    FAIL("the push went through without a file");
  } catch (const std::system_error& e) {
    CHECK(std::string(e.what()).find("/nonexistent/tidemark-spill") != std::string::npos);
  }
  CHECK(queue.pop() == "fits");
}

TEST_CASE("spill directory: TMPDIR when set, else /tmp") {
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("TMPDIR", "/var/tmp", 1);
  CHECK(spill_directory() == "/var/tmp");
  ::setenv("TMPDIR", "", 1);
  CHECK(spill_directory() == "/tmp");
  ::unsetenv("TMPDIR");
  CHECK(spill_directory() == "/tmp");
  if (before != nullptr) ::setenv("TMPDIR", saved.c_str(), 1);
}

}  // namespace tidemark
