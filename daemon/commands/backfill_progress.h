// Shows a backfill's progress: a bar redrawn in place on a terminal, one
// plain line per partition otherwise, and the closing summary. Called from
// every worker; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>

#include "core/run/run_observer.h"

namespace tidemark {

class BackfillProgress {
 public:
  BackfillProgress(std::ostream& out, bool terminal, int total);

  // One partition finished (in any state). `label` names it (its local date).
  void finished(const std::string& label, const RunSummary& summary, std::chrono::milliseconds took);
  // The closing line: done, failed, rows, time. Returns it too.
  std::string summary_line(const std::string& what) const;
  int failed() const;
  int done() const;  // partitions written

 private:
  void draw_bar() const;  // requires mutex_

  std::ostream& out_;
  bool terminal_;
  int total_;
  int done_ = 0;
  int failed_ = 0;
  int skipped_ = 0;
  std::int64_t rows_ = 0;
  std::chrono::steady_clock::time_point started_;
  mutable std::mutex mutex_;
};

}  // namespace tidemark
