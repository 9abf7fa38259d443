// The metrics registry without a network: series appear with their table,
// counters start at 0, reloads add and remove series, staleness follows
// each table's threshold.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "core/config/config_parser.h"
#include "daemon/serve/metrics_registry.h"

namespace tidemark {
namespace {

// A load's end as the job runner tells it: the run it closed, how long it
// took and how late it started.
JobEnded load_ended(const RunSummary& run, std::chrono::milliseconds duration = std::chrono::milliseconds(0),
                    std::optional<std::chrono::duration<double>> start_delay = std::nullopt) {
  JobEnded ended;
  ended.kind = JobKind::Load;
  ended.summary = run;
  ended.runs = {run};
  ended.duration = duration;
  ended.start_delay = start_delay;
  return ended;
}

// A reconcile's end that committed these counts (or found them, in a dry run).
JobEnded reconcile_ended(const TableKey& table, std::int64_t missing, std::int64_t gone, std::int64_t changed,
                         bool dry_run = false) {
  JobEnded ended;
  ended.kind = JobKind::Reconcile;
  ended.summary.table = table;
  ended.summary.status = RunStatus::Success;
  ended.reconcile.emplace();
  ended.reconcile->run = ended.summary;
  ended.reconcile->counts = ReconcileCounts{gone, missing, changed};
  ended.dry_run = dry_run;
  ended.duration = std::chrono::seconds(7);
  return ended;
}

Config config_with(const std::string& tables) {
  const auto daemon = parse_daemon_config({"t.yaml", "state: w\nconnections: { w: { dsn: x }, s: { dsn: y } }\n"});
  REQUIRE(daemon.value);
  const auto config = parse_config(*daemon.value, {{"p.yaml", "pipeline: p\nsource: s\ntarget: w\nschedule: '@hourly'\n"
                                                               "stale_after: 1h\ntables:\n" + tables}});
  REQUIRE(config.value);
  return *config.value;
}

const std::string kOrders = "  - { name: orders, source_table: s.o, target_table: r.o, key: [id], cursor: c }\n";
const std::string kEvents =
    "  - { name: events, source_table: s.e, target_table: r.e, key: [id], cursor: c, stale_after: 10m }\n";

bool has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

}  // namespace

TEST_CASE("every series of a configured table exists from the start, counters at 0") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders));
  const std::string text = metrics.scrape_text();
  CHECK(has(text, R"(tidemark_runs_total{pipeline="p",status="success",table="orders"} 0)"));
  // Failed runs by error kind; a success has none.
  CHECK(has(text, R"(tidemark_runs_total{error="transient",pipeline="p",status="failed",table="orders"} 0)"));
  CHECK(has(text, R"(tidemark_runs_total{error="permanent",pipeline="p",status="failed",table="orders"} 0)"));
  for (const char* reason : {"locked", "overrun"}) {
    CHECK(has(text, std::string(R"(tidemark_runs_skipped_total{pipeline="p",reason=")") + reason +
                        R"(",table="orders"} 0)"));
  }
  // A firing is never dropped for lack of a worker: it waits, and the wait is counted elsewhere.
  CHECK(text.find(R"(reason="concurrency")") == std::string::npos);
  CHECK(has(text, "tidemark_runs_queued 0"));
  CHECK(text.find(R"(tidemark_horizon_lag_seconds{pipeline="p",table="orders"} Nan)") != std::string::npos);
  CHECK(has(text, R"(tidemark_rows_written_total{pipeline="p",table="orders"} 0)"));
  CHECK(has(text, R"(tidemark_watermark_stale_after_seconds{pipeline="p",table="orders"} 3600)"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_count{pipeline="p"} 0)"));
  CHECK(has(text, R"(tidemark_db_up{connection="w"} 0)"));
  CHECK(has(text, "tidemark_config_last_reload_successful 1"));
  CHECK(text.find("tidemark_build_info{version=") != std::string::npos);
  // No watermark is known yet: no timestamp series.
  CHECK(text.find("tidemark_watermark_timestamp_seconds{") == std::string::npos);
}

TEST_CASE("a permanent failure flags the table until a run succeeds; a transient one changes nothing") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders));
  const std::string series = R"(tidemark_run_failed_permanently{pipeline="p",table="orders"} )";
  CHECK(has(metrics.scrape_text(), series + "0"));
  RunSummary run;
  run.table = {"p", "orders"};
  run.status = RunStatus::Failed;
  run.error_kind = ErrorKind::Permanent;
  metrics.job_ended(load_ended(run));
  CHECK(has(metrics.scrape_text(), series + "1"));
  run.error_kind = ErrorKind::Transient;  // the database went away meanwhile
  metrics.job_ended(load_ended(run));
  CHECK(has(metrics.scrape_text(), series + "1"));
  run.status = RunStatus::Success;
  metrics.job_ended(load_ended(run));
  CHECK(has(metrics.scrape_text(), series + "0"));
}

TEST_CASE("schema drift and the last reconcile's counts are per-table gauges, 0 from the start") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders));
  const std::string drift = R"(tidemark_schema_drift{pipeline="p",table="orders"} )";
  const std::string deleted = R"(tidemark_reconcile_deleted_rows{pipeline="p",table="orders"} )";
  const std::string missing = R"(tidemark_reconcile_missing_rows{pipeline="p",table="orders"} )";
  CHECK(has(metrics.scrape_text(), drift + "0"));
  CHECK(has(metrics.scrape_text(), deleted + "0"));
  CHECK(has(metrics.scrape_text(), missing + "0"));
  metrics.schema_drift({"p", "orders"}, true);
  metrics.reconcile_finished({"p", "orders"}, 20, 3);
  CHECK(has(metrics.scrape_text(), drift + "1"));
  CHECK(has(metrics.scrape_text(), deleted + "20"));
  CHECK(has(metrics.scrape_text(), missing + "3"));
  metrics.schema_drift({"p", "orders"}, false);
  metrics.reconcile_finished({"p", "gone"}, 1, 1);  // a table a reload dropped: ignored
  CHECK(has(metrics.scrape_text(), drift + "0"));
}

TEST_CASE("tidemark_rows_repaired_total counts what reconciles committed, by reason, 0 from the start") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders));
  const auto series = [](const char* reason) {
    return std::string(R"(tidemark_rows_repaired_total{pipeline="p",reason=")") + reason + R"(",table="orders"} )";
  };
  CHECK(has(metrics.scrape_text(), "# TYPE tidemark_rows_repaired_total counter"));
  for (const char* reason : {"changed", "gone", "missing"}) CHECK(has(metrics.scrape_text(), series(reason) + "0"));
  metrics.job_ended(reconcile_ended({"p", "orders"}, 2, 5, 7));
  metrics.job_ended(reconcile_ended({"p", "orders"}, 1, 0, 3));
  metrics.job_ended(reconcile_ended({"p", "orders"}, 100, 100, 100, /*dry_run=*/true));  // found, not written
  CHECK(has(metrics.scrape_text(), series("missing") + "3"));
  CHECK(has(metrics.scrape_text(), series("gone") + "5"));
  CHECK(has(metrics.scrape_text(), series("changed") + "10"));
  metrics.job_ended(reconcile_ended({"p", "gone"}, 1, 1, 1));  // a table a reload dropped: ignored
  CHECK(has(metrics.scrape_text(), series("changed") + "10"));
}

TEST_CASE("tidemark_reconcile_failed is 1 from a failed reconcile until one succeeds") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders));
  const std::string failed = R"(tidemark_reconcile_failed{pipeline="p",table="orders"} )";
  CHECK(has(metrics.scrape_text(), failed + "0"));
  metrics.reconcile_failed({"p", "orders"}, true);
  CHECK(has(metrics.scrape_text(), failed + "1"));
  metrics.reconcile_failed({"p", "gone"}, true);  // a table a reload dropped: ignored
  metrics.reconcile_failed({"p", "orders"}, false);
  CHECK(has(metrics.scrape_text(), failed + "0"));
}

TEST_CASE("tidemark_schema_drift follows the runs that compared columns, and the stored state after a restart") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders));
  const std::string drift = R"(tidemark_schema_drift{pipeline="p",table="orders"} )";
  RunSummary run;
  run.table = {"p", "orders"};
  run.status = RunStatus::Failed;
  run.error_kind = ErrorKind::Permanent;
  run.schema_drift = true;
  metrics.job_ended(load_ended(run));
  CHECK(has(metrics.scrape_text(), drift + "1"));
  // A run that failed before comparing (the source was down) knows nothing of it.
  run.error_kind = ErrorKind::Transient;
  run.schema_drift.reset();
  metrics.job_ended(load_ended(run));
  CHECK(has(metrics.scrape_text(), drift + "1"));
  // The operator fixed the target: the next run compares and loads.
  run.status = RunStatus::Success;
  run.schema_drift = false;
  metrics.job_ended(load_ended(run));
  CHECK(has(metrics.scrape_text(), drift + "0"));

  // A restarted daemon starts from the latest finished run in the state.
  MetricsRegistry restarted;
  restarted.set_config(config_with(kOrders));
  TableProgress progress;
  progress.schema_drift = true;
  restarted.table_progress({"p", "orders"}, progress, 1000.0);
  CHECK(has(restarted.scrape_text(), drift + "1"));
  progress.schema_drift.reset();  // the latest run did not compare: the gauge stays
  restarted.table_progress({"p", "orders"}, progress, 1000.0);
  CHECK(has(restarted.scrape_text(), drift + "1"));
}

TEST_CASE("runs are counted; a reload adds and removes whole tables") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders));
  RunSummary run;
  run.table = {"p", "orders"};
  run.status = RunStatus::Success;
  run.rows_written = 42;
  metrics.job_ended(load_ended(run));
  run.status = RunStatus::Failed;
  run.rows_written = 0;
  metrics.job_ended(load_ended(run));
  run.error_kind = ErrorKind::Permanent;
  metrics.job_ended(load_ended(run));
  metrics.job_ended(load_ended(run));
  metrics.run_skipped({"p", "orders"}, SkipReason::Overrun);
  std::string text = metrics.scrape_text();
  CHECK(has(text, R"(tidemark_runs_total{pipeline="p",status="success",table="orders"} 1)"));
  CHECK(has(text, R"(tidemark_runs_total{error="transient",pipeline="p",status="failed",table="orders"} 1)"));
  CHECK(has(text, R"(tidemark_runs_total{error="permanent",pipeline="p",status="failed",table="orders"} 2)"));
  CHECK(has(text, R"(tidemark_rows_written_total{pipeline="p",table="orders"} 42)"));
  CHECK(has(text, R"(tidemark_last_run_rows{pipeline="p",table="orders"} 42)"));
  CHECK(has(text, R"(tidemark_runs_skipped_total{pipeline="p",reason="overrun",table="orders"} 1)"));

  metrics.set_config(config_with(kOrders + kEvents));
  text = metrics.scrape_text();
  CHECK(has(text, R"(tidemark_runs_total{pipeline="p",status="success",table="orders"} 1)"));  // kept
  CHECK(has(text, R"(tidemark_runs_total{pipeline="p",status="success",table="events"} 0)"));
  CHECK(has(text, R"(tidemark_watermark_stale_after_seconds{pipeline="p",table="events"} 600)"));

  metrics.set_config(config_with(kEvents));
  text = metrics.scrape_text();
  CHECK(text.find(R"(table="orders")") == std::string::npos);
  // A run of a removed table that finishes later is ignored, not a crash.
  run.status = RunStatus::Success;
  metrics.job_ended(load_ended(run, std::chrono::seconds(1)));
}

TEST_CASE("age and stale follow each table's threshold") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders + kEvents));
  TableProgress progress;
  progress.watermark_unix = 1000.0;
  progress.moved_unix = 1000.0;
  metrics.table_progress({"p", "orders"}, progress, 1000.0 + 1800);  // 30 min old, threshold 1 h
  metrics.table_progress({"p", "events"}, progress, 1000.0 + 1800);  // 30 min old, threshold 10 min
  std::string text = metrics.scrape_text();
  CHECK(has(text, R"(tidemark_watermark_stale{pipeline="p",table="orders"} 0)"));
  CHECK(has(text, R"(tidemark_watermark_stale{pipeline="p",table="events"} 1)"));
  CHECK(has(text, R"(tidemark_watermark_age_seconds{pipeline="p",table="orders"} 1800)"));
  CHECK(has(text, R"(tidemark_watermark_timestamp_seconds{pipeline="p",table="orders"} 1000)"));

  // An integer cursor: no timestamp series; age counts from the last move.
  TableProgress integer;
  integer.moved_unix = 5000.0;
  metrics.table_progress({"p", "orders"}, integer, 5000.0 + 7200);
  text = metrics.scrape_text();
  CHECK(text.find(R"(tidemark_watermark_timestamp_seconds{pipeline="p",table="orders"})") == std::string::npos);
  CHECK(has(text, R"(tidemark_watermark_age_seconds{pipeline="p",table="orders"} 7200)"));
  CHECK(has(text, R"(tidemark_watermark_stale{pipeline="p",table="orders"} 1)"));
}

TEST_CASE("run durations and start delays are per-pipeline histograms with cumulative buckets") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders + kEvents));
  RunSummary orders;
  orders.table = {"p", "orders"};
  orders.status = RunStatus::Success;
  RunSummary events = orders;
  events.table = {"p", "events"};
  // A start delay equal to a bound is in its bucket; a run by hand has none.
  metrics.job_ended(load_ended(orders, std::chrono::seconds(3), std::chrono::milliseconds(50)));
  metrics.job_ended(load_ended(events, std::chrono::seconds(4000)));  // past the last bound
  // A reconcile has series of its own.
  metrics.job_ended(reconcile_ended({"p", "orders"}, 1, 1, 1));
  const std::string text = metrics.scrape_text();
  CHECK(has(text, "# TYPE tidemark_run_duration_seconds histogram"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_count{pipeline="p"} 2)"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_sum{pipeline="p"} 4003)"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_bucket{pipeline="p",le="2.5"} 0)"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_bucket{pipeline="p",le="5"} 1)"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_bucket{pipeline="p",le="3600"} 1)"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_bucket{pipeline="p",le="+Inf"} 2)"));
  CHECK(has(text, R"(tidemark_run_start_delay_seconds_bucket{pipeline="p",le="0.01"} 0)"));
  CHECK(has(text, R"(tidemark_run_start_delay_seconds_bucket{pipeline="p",le="0.05"} 1)"));
  CHECK(has(text, R"(tidemark_run_start_delay_seconds_count{pipeline="p"} 1)"));
  CHECK(has(text, R"(tidemark_last_run_duration_seconds{pipeline="p",table="orders"} 3)"));
  // Once per family, whatever the number of tables.
  std::size_t helps = 0;
  for (std::size_t at = text.find("# HELP tidemark_runs_total "); at != std::string::npos;
       at = text.find("# HELP tidemark_runs_total ", at + 1)) {
    ++helps;
  }
  CHECK(helps == 1);
}

TEST_CASE("a job's end counts each run it closed once; its table is in progress from its start to its end") {
  MetricsRegistry metrics;
  metrics.set_config(config_with(kOrders + kEvents));
  const std::string orders_in_progress = R"(tidemark_run_in_progress{pipeline="p",table="orders"} )";
  const std::string events_in_progress = R"(tidemark_run_in_progress{pipeline="p",table="events"} )";
  const std::string orders_rows = R"(tidemark_run_rows_in_progress{pipeline="p",table="orders"} )";
  RunMeter meter;
  metrics.job_started({"p", "orders"}, JobKind::Load, meter);
  metrics.job_started({"p", "events"}, JobKind::Load, meter);
  CHECK(has(metrics.scrape_text(), orders_in_progress + "1"));
  // Its rows so far, read from its meter at each scrape.
  CHECK(has(metrics.scrape_text(), orders_rows + "0"));
  meter.add(4096, 1 << 20);
  CHECK(has(metrics.scrape_text(), orders_rows + "4096"));
  // A ranged first load's share of its ranges committed, likewise.
  const std::string orders_ratio = R"(tidemark_run_progress_ratio{pipeline="p",table="orders"} )";
  CHECK(has(metrics.scrape_text(), orders_ratio + "0"));
  meter.set_ranges(3, 12);
  CHECK(has(metrics.scrape_text(), orders_ratio + "0.25"));
  CHECK(metrics.rows_in_progress().size() == 2);
  // A batch hands events back to run on its own: not in progress until it starts again.
  metrics.job_handed_back({"p", "events"}, JobKind::Load);
  CHECK(has(metrics.scrape_text(), events_in_progress + "0"));

  // A partition table's firing that wrote two partitions: two runs, one job.
  RunSummary partition;
  partition.table = {"p", "orders"};
  partition.status = RunStatus::Success;
  partition.rows_written = 10;
  JobEnded firing = load_ended(partition, std::chrono::seconds(2));
  firing.summary.rows_written = 20;
  firing.runs = {partition, partition};
  metrics.job_ended(firing);
  std::string text = metrics.scrape_text();
  CHECK(has(text, orders_in_progress + "0"));
  CHECK(has(text, orders_rows + "0"));
  CHECK(has(text, orders_ratio + "0"));  // back to 0 once the job ends
  CHECK(metrics.rows_in_progress().empty());
  CHECK(has(text, R"(tidemark_runs_total{pipeline="p",status="success",table="orders"} 2)"));
  CHECK(has(text, R"(tidemark_rows_written_total{pipeline="p",table="orders"} 20)"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_count{pipeline="p"} 1)"));

  // A reconcile is not a run: neither in progress nor counted with the runs.
  metrics.job_started({"p", "events"}, JobKind::Reconcile, meter);
  CHECK(has(metrics.scrape_text(), events_in_progress + "0"));
  metrics.job_ended(reconcile_ended({"p", "events"}, 3, 0, 0));
  text = metrics.scrape_text();
  CHECK(has(text, R"(tidemark_runs_total{pipeline="p",status="success",table="events"} 0)"));
  CHECK(has(text, R"(tidemark_run_duration_seconds_count{pipeline="p"} 1)"));
  CHECK(has(text, R"(tidemark_rows_repaired_total{pipeline="p",reason="missing",table="events"} 3)"));
}

TEST_CASE("the series of a table that a reload removes leave the scrape, while scrapes and runs go on") {
  // Regression: a scrape on the HTTP thread, runs reporting from workers
  // and reloads on the loop, all at once; the removed table's record must
  // outlive any scrape that still holds it, and no one else may touch it.
  MetricsRegistry metrics;
  const Config both = config_with(kOrders + kEvents);
  const Config events_only = config_with(kEvents);
  metrics.set_config(both);
  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0};
  std::thread scraper([&] {
    while (!done) {
      const std::string text = metrics.scrape_text();
      // Whole lines only: a table is there with every series, or not at all.
      CHECK(text.find("tidemark_build_info{version=") != std::string::npos);
      ++scrapes;
    }
  });
  std::thread worker([&] {
    RunMeter meter;
    RunSummary run;
    run.table = {"p", "orders"};
    run.status = RunStatus::Success;
    run.rows_written = 1;
    while (!done) {
      metrics.job_started(run.table, JobKind::Load, meter);
      metrics.job_ended(load_ended(run, std::chrono::seconds(1)));
      metrics.schema_drift(run.table, true);
      metrics.reconcile_finished(run.table, 1, 1);
    }
  });
  for (int i = 0; i < 300 || scrapes < 20; ++i) {
    metrics.set_config(i % 2 ? both : events_only);
  }
  metrics.set_config(events_only);
  done = true;
  scraper.join();
  worker.join();
  const std::string text = metrics.scrape_text();
  CHECK(text.find(R"(table="orders")") == std::string::npos);
  CHECK(has(text, R"(tidemark_runs_total{pipeline="p",status="success",table="events"} 0)"));
  // Added back, the table starts from zero again.
  metrics.set_config(both);
  CHECK(has(metrics.scrape_text(), R"(tidemark_rows_written_total{pipeline="p",table="orders"} 0)"));
}

}  // namespace tidemark
