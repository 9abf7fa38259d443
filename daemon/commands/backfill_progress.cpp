#include "daemon/commands/backfill_progress.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ostream>

namespace tidemark {

BackfillProgress::BackfillProgress(std::ostream& out, bool terminal, int total)
    : out_(out), terminal_(terminal), total_(total), started_(std::chrono::steady_clock::now()) {}

void BackfillProgress::finished(const std::string& label, const RunSummary& summary,
                                std::chrono::milliseconds took) {
  const std::lock_guard<std::mutex> lock(mutex_);
  switch (summary.status) {
    case RunStatus::Success:
      ++done_;
      rows_ += summary.rows_written;
      break;
    case RunStatus::SkippedLocked: ++skipped_; break;
    default: ++failed_;
  }
  if (terminal_) {
    if (summary.status != RunStatus::Success) {
      // Failures stay on screen above the bar.
      fmt::print(out_, "\r\033[K{}: {}: {}\n", label, run_status_name(summary.status), summary.error);
    }
    draw_bar();
  } else {
    fmt::print(out_, "{}: {}, {} rows, {} ms{}{}\n", label, run_status_name(summary.status), summary.rows_written,
               took.count(), summary.error.empty() ? "" : ": ", summary.error);
  }
  out_.flush();
}

void BackfillProgress::draw_bar() const {
  constexpr int kWidth = 30;
  const int finished = done_ + failed_ + skipped_;
  const int filled = total_ == 0 ? kWidth : finished * kWidth / total_;
  const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_);
  fmt::print(out_, "\r\033[K[{}{}] {}/{} partitions, {} failed, {} rows, {}s", std::string(filled, '#'),
             std::string(kWidth - filled, '.'), finished, total_, failed_, rows_, elapsed.count());
  if (finished == total_) fmt::print(out_, "\n");
}

std::string BackfillProgress::summary_line(const std::string& what) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return fmt::format("{}: {} partitions, {} done, {} failed, {} locked, {} rows, {:.1f}s", what, total_, done_,
                     failed_, skipped_, rows_, seconds);
}

int BackfillProgress::failed() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return failed_ + skipped_;
}

int BackfillProgress::done() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

}  // namespace tidemark
