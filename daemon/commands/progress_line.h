// What `run` and `backfill` show while a job copies: on a terminal one
// line, drawn again twice a second (rows, bytes, rate, elapsed, and the share
// of the table's estimated rows when known), cleared when the job ends;
// elsewhere a log line every kLogEvery. A JobEnds: it follows the job from
// its start to its end. Owns one thread while a job runs; its methods are
// called from the job's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/schedule/job_ends.h"

namespace tidemark {

class ProgressLine final : public JobEnds {
 public:
  // Twice a second: a line drawn late by a busy machine is still new
  // within the second.
  static constexpr std::chrono::milliseconds kDrawEvery{500};
  static constexpr std::chrono::seconds kLogEvery{10};

  // Draws on `terminal` when `on_terminal`, else logs.
  ProgressLine(std::ostream& terminal, bool on_terminal) : terminal_(terminal), on_terminal_(on_terminal) {}
  ~ProgressLine() override { stop(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Asked, on this object's thread at the next job's first line, the
  // rows its table holds by its statistics (nothing when unknown): a job
  // that ends sooner costs no question. Set before the job starts.
  using Estimate = std::function<std::optional<std::int64_t>()>;
  void set_estimate(Estimate estimate) { estimate_of_ = std::move(estimate); }
  // Told the rows and bytes so far every kRecordEvery while a job copies
  // (`status` in another shell reads them from the state), on this
  // object's thread. Set before a job starts.
  using Record = std::function<void(const TableKey& table, std::int64_t rows, std::int64_t bytes)>;
  static constexpr std::chrono::seconds kRecordEvery{2};
  void set_record(Record record) { record_ = std::move(record); }

  // Shows what `meter` counts for `table` until stop(): a job's, or a
  // command's own work outside a job (a cursor backfill).
  void follow(const TableKey& table, const RunMeter& meter);
  void stop();

  void job_started(const TableKey& table, JobKind, const RunMeter& meter) override { follow(table, meter); }
  void job_ended(const JobEnded&) override { stop(); }
  void job_handed_back(const TableKey&, JobKind) override { stop(); }

 private:
  void loop();
  // One line: "shop.orders: 1,200,000 rows (12 %), 143 MiB, 410,000 rows/s, 3 s".
  std::string line(std::int64_t rows, std::int64_t bytes, double seconds) const;

  std::ostream& terminal_;
  const bool on_terminal_;
  Estimate estimate_of_;
  std::optional<std::int64_t> estimate_;  // the running job's, once asked
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  const RunMeter* meter_ = nullptr;  // the job's, while it runs
  TableKey table_;
  Record record_;
  std::chrono::steady_clock::time_point started_;
  std::thread thread_;
};

}  // namespace tidemark
