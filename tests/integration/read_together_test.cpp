// Sessions read together: while the thread waits on one session's answer,
// the other's COPY is taken in ahead, so its server is never left with a
// full send buffer for long, and every row still comes out once, in order.
// A session broken while it waits fails its reader instead of hanging it.
// (The user timeout itself, over TCP: tests/integration/faults.)
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "daemon/pg/libpq/pg_copy_reader.h"
#include "daemon/pg/libpq/read_together.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

// COPY's text row "g\t<200 x's>" for g = 1, 2, ...
constexpr const char* kManyRows =
    "COPY (SELECT g, repeat('x', 200) FROM generate_series(1, 100000) g) TO STDOUT";

void read_all_in_order(PgCopyReader& reader) {
  int expected = 1;
  while (const auto row = reader.next()) {
    REQUIRE(row->substr(0, row->find('\t')) == std::to_string(expected));
    ++expected;
  }
  CHECK(expected == 100001);
}

}  // namespace

TEST_CASE("sessions read together: one's COPY is taken in while the other's is waited for, every row once, in order") {
  PgTestEnv env;
  ReadTogether together{&env.source(), &env.target()};
  PgCopyReader slow(env.source(), "COPY (SELECT pg_sleep(3.5), 'done') TO STDOUT");
  PgCopyReader many(env.target(), kManyRows);
  const auto started = std::chrono::steady_clock::now();
  const auto row = slow.next();
  REQUIRE(row);
  CHECK(row->find("done") != std::string_view::npos);
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::seconds(3));
  // Taken in about once a second, a socket's buffer at a time.
  CHECK(many.read_ahead_bytes() > 0);
  CHECK_FALSE(slow.next());
  read_all_in_order(many);
  CHECK_FALSE(env.target().needs_reset());
}

TEST_CASE("sessions read together: a statement's answer, read while another is waited for, comes whole") {
  // What reading ahead does to the server (its window opened once a
  // second) shows over TCP only: tests/integration/faults. Here, that
  // the answer taken in that way is the answer.
  PgTestEnv env;
  ReadTogether together{&env.source(), &env.target()};
  env.source().send("SELECT pg_sleep(2.5)", {});
  env.target().send("SELECT g, repeat('x', 200) FROM generate_series(1, 10000) g", {});  // 2 MB: no socket holds it
  const auto started = std::chrono::steady_clock::now();
  env.source().finish();
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::seconds(2));
  const PgResult rows = env.target().finish();
  REQUIRE(rows.rows() == 10000);
  for (int i = 0; i < rows.rows(); ++i) REQUIRE(rows.integer(i, 0) == i + 1);
}

TEST_CASE("regression: a reader handing out what it had read ahead counted as reading its socket, left unread meanwhile") {
  PgTestEnv env;
  ReadTogether together{&env.source(), &env.target()};
  PgCopyReader slow(env.source(), "COPY (SELECT pg_sleep(1.5)) TO STDOUT");
  PgCopyReader many(env.target(), kManyRows);
  REQUIRE(slow.next());
  CHECK_FALSE(slow.next());
  const std::uint64_t read_ahead = many.read_ahead_bytes();
  REQUIRE(read_ahead > 0);
  // Handed out slowly, for 3 s: its socket comes due again meanwhile.
  int expected = 1;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    const auto row = many.next();
    REQUIRE(row);
    REQUIRE(row->substr(0, row->find('\t')) == std::to_string(expected));
    ++expected;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(many.read_ahead_bytes() > read_ahead);
  while (const auto row = many.next()) {
    REQUIRE(row->substr(0, row->find('\t')) == std::to_string(expected));
    ++expected;
  }
  CHECK(expected == 100001);
}

TEST_CASE("sessions read apart: nothing is taken in ahead") {
  PgTestEnv env;
  PgCopyReader slow(env.source(), "COPY (SELECT pg_sleep(1.5)) TO STDOUT");
  PgCopyReader many(env.target(), kManyRows);
  REQUIRE(slow.next());
  CHECK(many.read_ahead_bytes() == 0);
  CHECK_FALSE(slow.next());
  read_all_in_order(many);
}

TEST_CASE("regression: a session ended by the server before its COPY was read left its reader waiting for good") {
  PgTestEnv env;
  ReadTogether together{&env.source(), &env.target()};
  const std::string pid = std::to_string(env.target().backend_pid());
  PgCopyReader ended(env.target(), "COPY (SELECT pg_sleep(30)) TO STDOUT");
  PgTestEnv::rows(env.source(), "SELECT pg_terminate_backend(" + pid + ")");
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(ended.next(), PgError);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  CHECK(env.target().needs_reset());
}

}  // namespace tidemark
