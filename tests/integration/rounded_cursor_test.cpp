// A cursor column of less than microsecond precision (timestamptz(3), an
// ORM's default; timestamp(0)) stores now() rounded. hi, held at an open
// transaction's start (say ...38.149397), stayed above that transaction's
// row once stored (...38.149), and the row was never loaded.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include "core/watermark/safe_horizon.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

// Opens a transaction on `writer` whose start, stored in a column of
// `digits` fractional digits, rounds down (below the start itself): the
// case that lost the row. Returns once one is open.
void begin_rounding_down(PgConnection& writer, int digits) {
  const std::string unit = std::to_string(static_cast<long>(std::pow(10, 6 - digits)));
  for (int attempt = 0; attempt < 200; ++attempt) {
    const auto r = PgTestEnv::rows(writer, "begin; select (extract(microseconds from now())::bigint % " + unit +
                                               ") < " + unit + " / 2");
    if (r[0] == "t") return;
    writer.exec("rollback");
    std::this_thread::sleep_for(std::chrono::milliseconds(7));
  }
  FAIL("no transaction start rounded down in 200 tries");
}

struct Rounded {
  PgTestEnv env;
  testing::TableRuns runs;

  explicit Rounded(const std::string& column_type)
      : runs(prepared(env, column_type),
             env.config("pipeline: p\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
                        "  - name: p3\n    source_table: public.p3\n    target_table: public.p3\n"
                        "    key: [id]\n    cursor: updated_at\n")) {}

  std::string watermark() {
    return PgTestEnv::rows(env.state(), "select value from tidemark.watermarks where pipeline = 'p'").at(0);
  }

  static PgTestEnv& prepared(PgTestEnv& env, const std::string& column_type) {
    const std::string table = "create table public.p3 (id int primary key, v text, updated_at " + column_type +
                              " not null default now())";
    env.source().exec(table + "; insert into public.p3 values (0, 'seed', now() - interval '1 minute')");
    env.target().exec(table);
    return env;
  }

  // The regression: a row whose transaction is open, and started more
  // than kStartReportMargin ago, while a run passes.
  void row_committed_behind_a_run(int digits) {
    REQUIRE(runs.run("p", "p3").summary.status == RunStatus::Success);
    PgConnection writer(env.dsn("source"), "writer");
    begin_rounding_down(writer, digits);
    writer.exec("insert into public.p3 (id, v) values (1, 'x')");
    // hi is held at the transaction's start only once the clock's margin has passed it.
    std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(100));
    REQUIRE(runs.run("p", "p3").summary.status == RunStatus::Success);
    writer.exec("commit");
    // The watermark claims nothing at or above the row's stored value:
    // the row is below it only when it was lost.
    CHECK(PgTestEnv::rows(env.source(), "select updated_at >= '" + watermark() + "' from public.p3 where id = 1") ==
          std::vector<std::string>{"t"});
    // Once the clock has passed it by the margin and one step of the
    // column, a run loads it.
    const auto step = std::chrono::microseconds(static_cast<long>(std::pow(10, 6 - digits)));
    std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + step + std::chrono::milliseconds(50));
    REQUIRE(runs.run("p", "p3").summary.status == RunStatus::Success);
    const auto lines = [](PgConnection& c) {
      std::string out;
      for (const std::string& row : PgTestEnv::rows(c, "select id, v, updated_at from public.p3 order by id")) {
        out += row + "\n";
      }
      return out;
    };
    CHECK(lines(env.target()) == lines(env.source()));
  }
};

}  // namespace

TEST_CASE("regression: a timestamptz(3) cursor no longer loses the row of a transaction open during a run") {
  Rounded r("timestamptz(3)");
  r.row_committed_behind_a_run(3);
}

TEST_CASE("regression: a timestamp(0) cursor no longer loses the row of a transaction open during a run") {
  Rounded r("timestamp(0)");
  r.row_committed_behind_a_run(0);
}

}  // namespace tidemark
