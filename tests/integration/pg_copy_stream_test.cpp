// PgCopyStream between two real sessions: a window without rows never
// touches the target, rows cross as they are, and a failure says what kind
// it is (a row a query must not return: permanent; a cancel: transient),
// writes nothing and leaves both sessions to be reset.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/run/cancel_token.h"
#include "daemon/pg/libpq/pg_copy_stream.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

std::string value_of(PgConnection& on, const std::string& sql) { return PgTestEnv::rows(on, sql)[0]; }

}  // namespace

TEST_CASE("a COPY without rows leaves the target untouched, in text and in binary; rows cross as they are") {
  PgTestEnv env;
  env.source().exec("create table public.items (n int, note text)");
  env.target().exec("create table public.items (n int, note text)");
  CancelToken cancel;
  PgCopyStream stream(env.source(), env.target(), cancel);
  int prepared = 0;
  const auto copy_in = [&](const char* format) {
    return [&prepared, format] {
      ++prepared;
      return std::string("COPY public.items FROM STDIN") + format;
    };
  };
  CHECK(stream.copy("COPY public.items TO STDOUT", copy_in("")) == 0);
  CHECK(stream.copy("COPY public.items TO STDOUT (FORMAT binary)", copy_in(" (FORMAT binary)"), true) == 0);
  CHECK(prepared == 0);

  env.source().exec("insert into public.items select g, 'tab\tand\nline ' || g from generate_series(1, 1000) g");
  CHECK(stream.copy("COPY public.items TO STDOUT (FORMAT binary)", copy_in(" (FORMAT binary)"), true) == 1000);
  CHECK(prepared == 1);
  // A query's rows, through single-row mode and COPY's text format.
  CHECK(stream.copy_query("select n, note from public.items where n > $1", {"990"}, {23}, "public.items") == 10);
  CHECK(value_of(env.target(), "select count(*) from public.items") == "1010");
  CHECK(value_of(env.target(), "select note from public.items where n = 1000 limit 1") == "tab\tand\nline 1000");
  CHECK_FALSE(env.target().needs_reset());
  CHECK_FALSE(env.source().needs_reset());
}

TEST_CASE("a query's rows go into the target's columns of the same names, whatever they are") {
  PgTestEnv env;
  env.target().exec(R"SQL(create table public."Odd ""Names""" ("Key" int, "we""ird; drop" text, "a b" text))SQL");
  CancelToken cancel;
  CHECK(PgCopyStream(env.source(), env.target(), cancel)
            .copy_query(R"SQL(select 1 as "Key", 'x' as "we""ird; drop", 'y' as "a b")SQL", {}, {},
                        R"SQL(public."Odd ""Names""")SQL") == 1);
  CHECK(PgTestEnv::rows(env.target(), R"SQL(select "Key", "we""ird; drop", "a b" from public."Odd ""Names""")SQL") ==
        std::vector<std::string>{"1|x|y"});
}

TEST_CASE("regression: a target's refusal of a query's rows was transient whatever its SQLSTATE") {
  // As in a whole COPY's: a row the target's constraint refuses is
  // permanent, a missing parent transient (its table may load first).
  PgTestEnv env;
  env.target().exec(
      "create table public.parents (id int primary key);"
      "create table public.kids (id int check (id < 3), parent int references public.parents)");
  CancelToken cancel;
  const auto refusal = [&](const std::string& query) -> PgError {
    try {
      PgCopyStream(env.source(), env.target(), cancel).copy_query(query, {}, {}, "public.kids");
    } catch (const PgError& e) {
      return e;
    }
    FAIL("the target took rows it must refuse");
    return PgError(ErrorKind::Transient, "");
  };
  const PgError check = refusal("select g as id from generate_series(1, 5) g");
  CHECK(check.sqlstate() == "23514");
  CHECK(check.kind() == ErrorKind::Permanent);
  CHECK(std::string(check.what()).rfind("target: COPY into public.kids: ERROR:  new row for relation", 0) == 0);
  const PgError parent = refusal("select 1 as id, 7 as parent");
  CHECK(parent.sqlstate() == "23503");
  CHECK(parent.kind() == ErrorKind::Transient);
  const PgError missing = refusal("select 1 as no_such_column");
  CHECK(missing.sqlstate() == "42703");
  CHECK(missing.kind() == ErrorKind::Permanent);
  CHECK(value_of(env.target(), "select count(*) from public.kids") == "0");
}

TEST_CASE("regression: a source's error after its COPY rows began was transient whatever its SQLSTATE") {
  PgTestEnv env;
  env.target().exec("create table public.items (n int, note text)");
  CancelToken cancel;
  // Half a megabyte of rows reaches the target before the division by zero.
  const std::string copy_out =
      "COPY (select 1000 / (g - 500), repeat('x', 1000) from generate_series(1, 1000) g) TO STDOUT";
  try {
    PgCopyStream(env.source(), env.target(), cancel).copy(copy_out, [] {
      return std::string("COPY public.items FROM STDIN");
    });
    FAIL("a copy whose source failed succeeded");
  } catch (const PgError& e) {
    CHECK(e.sqlstate() == "22012");
    CHECK(e.kind() == ErrorKind::Permanent);
    const std::string what = e.what();
    CHECK(what.rfind("source: COPY (select 1000 / (g - 500)", 0) == 0);
    const std::string tail = ": ERROR:  division by zero";
    CHECK(what.substr(what.size() - std::min(what.size(), tail.size())) == tail);
  }
  CHECK(value_of(env.target(), "select count(*) from public.items") == "0");
  CHECK(env.target().needs_reset());
}

TEST_CASE("a row a query must not return stops its copy with a permanent error, and nothing is written") {
  PgTestEnv env;
  env.target().exec("create table public.days (day int)");
  CopyRowCheck inside;
  inside.column = "day";
  inside.describe = [](const std::optional<std::string>& value) {
    return "day " + value.value_or("NULL") + " is outside";
  };
  CancelToken cancel;
  env.target().exec("BEGIN");
  try {
    PgCopyStream(env.source(), env.target(), cancel)
        .copy_query("select g as day, g < 3 from generate_series(1, 5) g", {}, {}, "public.days", &inside);
    FAIL("a row outside the check was copied");
  } catch (const PgError& e) {
    CHECK(std::string(e.what()) == "day 3 is outside");
    CHECK(e.kind() == ErrorKind::Permanent);
  }
  env.target().rollback_quietly();
  CHECK(value_of(env.target(), "select count(*) from public.days") == "0");
  CHECK(env.target().needs_reset());
  CHECK(env.source().needs_reset());
}

TEST_CASE("a cancelled copy fails as transient, with the token's reason, and nothing is written") {
  PgTestEnv env;
  env.target().exec("create table public.items (n int)");
  CancelToken cancel;
  cancel.cancel("SIGTERM");
  env.target().exec("BEGIN");
  for (const bool query : {false, true}) {
    CAPTURE(query);
    // A session of its own: the cancel the first copy sends its server
    // must not reach the second's statement.
    PgConnection source(env.dsn("source"), "source");
    try {
      PgCopyStream stream(source, env.target(), cancel);
      if (query) {
        stream.copy_query("select g as n from generate_series(1, 100000) g", {}, {}, "public.items");
      } else {
        stream.copy("COPY (select g from generate_series(1, 100000) g) TO STDOUT",
                    [] { return std::string("COPY public.items FROM STDIN"); });
      }
      FAIL("a cancelled copy went on");
    } catch (const PgError& e) {
      CHECK(std::string(e.what()) == cancel.reason());
      CHECK(e.kind() == ErrorKind::Transient);
    }
  }
  env.target().rollback_quietly();
  CHECK(value_of(env.target(), "select count(*) from public.items") == "0");
}

TEST_CASE("regression: a copy cancelled while its target waited for the table's lock said so after the statement") {
  // The run row must open with the cancel's reason, wherever the copy
  // was when it came.
  PgTestEnv env;
  env.target().exec("create table public.items (n int)");
  PgConnection holder(env.dsn("target"), "holder");
  holder.exec("BEGIN; LOCK TABLE public.items IN ACCESS EXCLUSIVE MODE");
  CancelToken cancel;
  std::thread stop([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    cancel.cancel("SIGINT");
  });
  try {
    PgCopyStream(env.source(), env.target(), cancel)
        .copy("COPY (select g from generate_series(1, 1000) g) TO STDOUT",
              [] { return std::string("COPY public.items FROM STDIN"); });
    FAIL("a cancelled copy went on");
  } catch (const PgError& e) {
    CHECK(std::string(e.what()) == cancel.reason());
    CHECK(e.kind() == ErrorKind::Transient);
  }
  stop.join();
  holder.exec("COMMIT");
  env.target().rollback_quietly();
  CHECK(value_of(env.target(), "select count(*) from public.items") == "0");
}

}  // namespace tidemark
