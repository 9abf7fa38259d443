// Why a table is stale or failing, table-driven: each row is a table's
// state and the reason and words the rules give for it (failing before
// ahead before never ran before held back before stale), worked out by
// hand, not by running the code.
#include <doctest/doctest.h>

#include <string>

#include "core/watermark/table_reason.h"

namespace tidemark {
namespace {

constexpr double kNow = 1'800'000'000;  // 2027-01-15T08:00:00Z
constexpr std::int64_t kHour = 3600;

WatermarkReading time_watermark(double age_seconds, bool ahead_of_source = false) {
  WatermarkReading r;
  r.watermark_unix = kNow - age_seconds;
  r.moved_unix = kNow - age_seconds;
  r.ahead_of_source = ahead_of_source;
  return r;
}

WatermarkReading integer_watermark(double unmoved_seconds) {
  WatermarkReading r;
  r.moved_unix = kNow - unmoved_seconds;
  return r;
}

// A table whose latest run succeeded `ago` seconds before now.
TableRunFacts succeeded(double ago) {
  TableRunFacts f;
  f.any_run = true;
  f.last_success_at = kNow - ago;
  return f;
}

TableRunFacts held(double ago, double lag, const std::string& by) {
  TableRunFacts f = succeeded(ago);
  f.horizon_lag_seconds = lag;
  f.horizon_held_by = by;
  return f;
}

TableRunFacts failed(std::int64_t failures, double since_ago, std::optional<ErrorKind> kind, const std::string& error,
                     std::optional<double> success_ago) {
  TableRunFacts f;
  f.any_run = true;
  f.last_failed = true;
  f.failures = failures;
  f.failing_since = kNow - since_ago;
  f.last_error_kind = kind;
  f.last_error = error;
  if (success_ago) f.last_success_at = kNow - *success_ago;
  return f;
}

const std::string kSession =
    "pid 4242 (psql, idle in transaction), in a transaction since 2027-01-15T05:00:00.000000Z";

}  // namespace

TEST_CASE("the reason a table is stale or failing, in the operator's words") {
  struct Row {
    const char* name;
    WatermarkReading reading;
    TableRunFacts runs;
    std::int64_t stale_after;
    Reason reason;
    std::string text;
  };
  const Row rows[] = {
      {"a fresh table that runs has nothing to say", time_watermark(600), succeeded(300), kHour, Reason::None, ""},
      {"a table with no run at all", WatermarkReading{}, TableRunFacts{}, kHour, Reason::NeverRan, "never ran"},
      {"a first run still going is not 'never ran', nor anything else",
       WatermarkReading{}, [] { TableRunFacts f; f.any_run = true; return f; }(), kHour, Reason::None, ""},
      {"a rewound watermark before any run: never ran, though old", time_watermark(5 * kHour), TableRunFacts{}, kHour,
       Reason::NeverRan, "never ran"},
      {"one transient failure after a success, not stale yet",
       time_watermark(600), failed(1, 60, ErrorKind::Transient, "connection refused", 900), kHour, Reason::Failing,
       "failing since 2027-01-15T07:59:00Z (1 run; transient: connection refused)"},
      {"permanent failures: the count, since when, and the error's first line only",
       time_watermark(3 * kHour),
       failed(7, 2 * kHour, ErrorKind::Permanent, "relation \"raw.events\" does not exist\nLINE 1: insert", 3 * kHour),
       kHour, Reason::Failing,
       "failing since 2027-01-15T06:00:00Z (7 runs; permanent: relation \"raw.events\" does not exist)"},
      {"a failure recorded before kinds were: no kind is made up",
       time_watermark(600), failed(2, 120, std::nullopt, "abandoned", std::nullopt), kHour, Reason::Failing,
       "failing since 2027-01-15T07:58:00Z (2 runs: abandoned)"},
      {"schema drift: what changed, since when, how many runs it stopped",
       time_watermark(2 * kHour),
       [] {
         TableRunFacts f = failed(3, kHour, ErrorKind::Permanent,
                                  "schema drift in public.orders: added column note text", 2 * kHour);
         f.schema_drift = "added column note text";
         return f;
       }(),
       kHour, Reason::SchemaDrift, "schema drift: added column note text (since 2027-01-15T07:00:00Z, 3 runs stopped)"},
      {"drift found earlier, but the latest run failed otherwise: failing",
       time_watermark(600), failed(1, 60, ErrorKind::Transient, "connection refused", 900), kHour, Reason::Failing,
       "failing since 2027-01-15T07:59:00Z (1 run; transient: connection refused)"},
      {"failing wins over ahead", time_watermark(-kHour, true),
       failed(1, 60, ErrorKind::Permanent, "boom", std::nullopt), kHour, Reason::Failing,
       "failing since 2027-01-15T07:59:00Z (1 run; permanent: boom)"},
      {"ahead of the source, in the last run's words", time_watermark(30, true),
       held(60, 1, "the stored watermark 2027-02-01 is ahead of the source's safe horizon 2027-01-15"), kHour,
       Reason::Ahead, "ahead of the source: the stored watermark 2027-02-01 is ahead of the source's safe horizon 2027-01-15"},
      {"ahead of the clock, with no run to say so", time_watermark(-2 * 86400), succeeded(60), kHour, Reason::Ahead,
       "ahead of the source: the watermark is 2d past the state database's clock; rewind it to a value the source "
       "has passed"},
      {"ahead wins over never ran", time_watermark(-2 * 86400), TableRunFacts{}, kHour, Reason::Ahead,
       "ahead of the source: the watermark is 2d past the state database's clock; rewind it to a value the source "
       "has passed"},
      {"stale while a session holds hi back: the hold is most of the age",
       time_watermark(3 * kHour), held(300, 3 * kHour - 300, kSession), kHour, Reason::HeldBack,
       "held back by " + kSession},
      {"a hold that is not stale yet is nothing to say", time_watermark(1800), held(300, 1500, kSession), kHour,
       Reason::None, ""},
      {"a small hold does not explain a stale watermark: runs stopped", time_watermark(5 * kHour),
       held(5 * kHour - 2, 2, kSession), kHour, Reason::Stale, "stale: no run has succeeded for 4h (stale_after 1h)"},
      {"no success for longer than stale_after", time_watermark(3 * kHour), succeeded(3 * kHour - 5), kHour,
       Reason::Stale, "stale: no run has succeeded for 2h (stale_after 1h)"},
      {"runs succeed, but too far apart for stale_after", time_watermark(2 * kHour + 60), succeeded(kHour),
       90 * 60, Reason::Stale, "stale: the watermark is 2h old (stale_after 90m); the last run succeeded 60m ago"},
      {"an integer watermark that stood still: no new rows", integer_watermark(3 * kHour), succeeded(120),
       2 * kHour, Reason::Stale,
       "stale: the watermark has not moved for 3h (stale_after 2h); the last run succeeded 2m ago and found no "
       "new rows"},
      {"stale with no success ever (a watermark set by a rewind)", time_watermark(3 * kHour),
       [] { TableRunFacts f; f.any_run = true; return f; }(), kHour, Reason::Stale,
       "stale: the watermark is 3h old (stale_after 1h) and no run has succeeded"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    const TableReason why = explain_table(row.reading, row.runs, kNow, std::chrono::seconds(row.stale_after));
    CHECK(std::string(reason_name(why.reason)) == reason_name(row.reason));
    CHECK(why.text == row.text);
  }
}

TEST_CASE("a failing reason carries its parts for the JSON") {
  const TableReason why = explain_table(
      time_watermark(600), failed(3, 1800, ErrorKind::Permanent, "column \"x\" does not exist\nHINT", 7200), kNow,
      std::chrono::seconds(kHour));
  CHECK(why.reason == Reason::Failing);
  CHECK(why.failures == 3);
  CHECK(why.failing_since == kNow - 1800);
  CHECK(why.error_kind == ErrorKind::Permanent);
  CHECK(why.error_line == "column \"x\" does not exist");
}

TEST_CASE("a held-back reason names the holder for the JSON") {
  const TableReason why =
      explain_table(time_watermark(3 * kHour), held(60, 3 * kHour, kSession), kNow, std::chrono::seconds(kHour));
  CHECK(why.reason == Reason::HeldBack);
  CHECK(why.held_by == kSession);
}

TEST_CASE("rows missing at the last reconcile: said of a fresh table; stale and failing come first") {
  TableRunFacts missing = succeeded(60);
  missing.reconcile_missing = 3;
  missing.reconcile_at = kNow - 7200;
  const TableReason fresh = explain_table(time_watermark(120), missing, kNow, std::chrono::hours(1));
  CHECK(fresh.reason == Reason::RowsMissing);
  CHECK(fresh.text ==
        "rows missing: the last reconcile (2027-01-15T06:00:00Z) found 3 source rows below the watermark that the "
        "target lacked, and copied them again");
  CHECK(explain_table(time_watermark(3 * kHour), missing, kNow, std::chrono::hours(1)).reason == Reason::Stale);
  TableRunFacts failing = missing;
  failing.last_failed = true;
  failing.failures = 1;
  CHECK(explain_table(time_watermark(120), failing, kNow, std::chrono::hours(1)).reason == Reason::Failing);
  TableRunFacts none_missing = succeeded(60);
  none_missing.reconcile_missing = 0;
  CHECK(explain_table(time_watermark(120), none_missing, kNow, std::chrono::hours(1)).reason == Reason::None);
}

TEST_CASE("a failing reconcile: said of a fresh table, before rows missing; stale and failing loads come first") {
  TableRunFacts facts = succeeded(60);
  facts.reconcile_missing = 3;  // from the last success, older than the failure
  facts.reconcile_at = kNow - 2 * 86400.0;
  facts.reconcile_failed = true;
  facts.reconcile_failed_at = kNow - 7200;
  facts.reconcile_error = "source table public.orders holds no row, but target table raw.orders does\nmore";
  const TableReason fresh = explain_table(time_watermark(120), facts, kNow, std::chrono::hours(1));
  CHECK(fresh.reason == Reason::ReconcileFailing);
  CHECK(fresh.text ==
        "reconcile failing (2027-01-15T06:00:00Z): source table public.orders holds no row, but target table "
        "raw.orders does");
  CHECK(fresh.error_line == "source table public.orders holds no row, but target table raw.orders does");
  CHECK(explain_table(time_watermark(3 * kHour), facts, kNow, std::chrono::hours(1)).reason == Reason::Stale);
  TableRunFacts load_failing = facts;
  load_failing.last_failed = true;
  load_failing.failures = 1;
  CHECK(explain_table(time_watermark(120), load_failing, kNow, std::chrono::hours(1)).reason == Reason::Failing);
  facts.reconcile_failed = false;  // the next reconcile succeeded
  CHECK(explain_table(time_watermark(120), facts, kNow, std::chrono::hours(1)).reason == Reason::RowsMissing);
}

TEST_CASE("unseen changes: said of a fresh table after rows missing; stale comes first, none or 0 say nothing") {
  TableRunFacts facts = succeeded(60);
  facts.unseen_changes = 31;
  const TableReason fresh = explain_table(time_watermark(120), facts, kNow, std::chrono::hours(1));
  CHECK(fresh.reason == Reason::UnseenChanges);
  CHECK(fresh.unseen_changes == 31);
  CHECK(fresh.text.rfind("unseen changes: the source counted 31 updates and deletes that the cursor", 0) == 0);
  CHECK(fresh.text.find("mode: snapshot") != std::string::npos);
  CHECK(explain_table(time_watermark(3 * kHour), facts, kNow, std::chrono::hours(1)).reason == Reason::Stale);
  TableRunFacts missing = facts;
  missing.reconcile_missing = 2;
  CHECK(explain_table(time_watermark(120), missing, kNow, std::chrono::hours(1)).reason == Reason::RowsMissing);
  facts.unseen_changes = 0;
  CHECK(explain_table(time_watermark(120), facts, kNow, std::chrono::hours(1)).reason == Reason::None);
  facts.unseen_changes.reset();
  CHECK(explain_table(time_watermark(120), facts, kNow, std::chrono::hours(1)).reason == Reason::None);
}

TEST_CASE("waiting: a fresh partition table whose complete partition an input holds back says for which and how long") {
  TableRunFacts facts = held(60, 600, "waiting for shop.orders, at 2027-01-15T23:58:10Z");
  facts.input_wait_seconds = 420;
  const TableReason fresh = explain_table(time_watermark(120), facts, kNow, std::chrono::hours(26));
  CHECK(fresh.reason == Reason::Waiting);
  CHECK(fresh.held_by == "waiting for shop.orders, at 2027-01-15T23:58:10Z");
  CHECK(fresh.waited_seconds == 420);
  CHECK(fresh.text == "waiting for shop.orders, at 2027-01-15T23:58:10Z (a complete partition waits, for 7m)");
  // An input that has loaded nothing: no length to give.
  facts.input_wait_seconds = 0;
  facts.horizon_held_by = "waiting for shop.orders, which has loaded nothing yet";
  CHECK(explain_table(time_watermark(120), facts, kNow, std::chrono::hours(26)).text ==
        "waiting for shop.orders, which has loaded nothing yet (a complete partition waits)");
  // Stale, it is held back, and says so as any hold; the lesser reasons of a fresh table come first.
  facts.input_wait_seconds = 420;
  CHECK(explain_table(time_watermark(30 * kHour), facts, kNow, std::chrono::hours(26)).reason != Reason::Waiting);
  facts.unseen_changes = 3;
  CHECK(explain_table(time_watermark(120), facts, kNow, std::chrono::hours(26)).reason == Reason::UnseenChanges);
  // No wait recorded: nothing to say.
  CHECK(explain_table(time_watermark(120), held(60, 600, "waiting for shop.orders, at 2027-01-15T23:58:10Z"), kNow,
                      std::chrono::hours(26))
            .reason == Reason::None);
}

TEST_CASE("reason names for the JSON") {
  CHECK(std::string(reason_name(Reason::None)).empty());
  CHECK(std::string(reason_name(Reason::SchemaDrift)) == "schema_drift");
  CHECK(std::string(reason_name(Reason::Failing)) == "failing");
  CHECK(std::string(reason_name(Reason::Ahead)) == "ahead");
  CHECK(std::string(reason_name(Reason::NeverRan)) == "never_ran");
  CHECK(std::string(reason_name(Reason::HeldBack)) == "held_back");
  CHECK(std::string(reason_name(Reason::Stale)) == "stale");
  CHECK(std::string(reason_name(Reason::ReconcileFailing)) == "reconcile_failing");
  CHECK(std::string(reason_name(Reason::RowsMissing)) == "rows_missing");
  CHECK(std::string(reason_name(Reason::UnseenChanges)) == "unseen_changes");
  CHECK(std::string(reason_name(Reason::Waiting)) == "waiting");
  CHECK(first_line("one\r\ntwo") == "one");
  CHECK(first_line("only") == "only");
}

}  // namespace tidemark
