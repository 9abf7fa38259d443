#include "daemon/commands/progress_line.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ostream>

#include "core/text/plain_text.h"

namespace tidemark {

void ProgressLine::follow(const TableKey& table, const RunMeter& meter) {
  stop();
  const std::lock_guard<std::mutex> lock(mutex_);
  meter_ = &meter;
  table_ = table;
  estimate_.reset();
  started_ = std::chrono::steady_clock::now();
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void ProgressLine::stop() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  const std::lock_guard<std::mutex> lock(mutex_);
  meter_ = nullptr;
}

std::string ProgressLine::line(std::int64_t rows, std::int64_t bytes, double seconds) const {
  std::string out = table_.display() + ": " + grouped(rows) + " rows";
  if (estimate_ && *estimate_ > 0) {
    out += fmt::format(" of ~{} ({:.0f} %)", grouped(*estimate_), 100.0 * static_cast<double>(rows) /
                                                                        static_cast<double>(*estimate_));
  }
  out += fmt::format(", {:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  if (seconds > 0) out += ", " + grouped(static_cast<std::int64_t>(static_cast<double>(rows) / seconds)) + " rows/s";
  out += fmt::format(", {:.0f} s", seconds);
  return out;
}

void ProgressLine::loop() {
  bool drawn = false;
  bool estimated = false;
  std::int64_t recorded = 0;
  auto log_at = started_ + kLogEvery;
  auto record_at = started_ + kRecordEvery;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kDrawEvery, [this] { return stopping_; })) {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - started_).count();
    const std::int64_t rows = meter_->rows();
    if (record_ && now >= record_at && rows != recorded) {
      // A write to the state database: stop() must not wait behind it.
      const std::int64_t bytes = meter_->bytes();
      lock.unlock();
      record_(table_, rows, bytes);
      lock.lock();
      recorded = rows;
      record_at = now + kRecordEvery;
    }
    if (!estimated && estimate_of_) {
      // A catalog read on the source: stop() must not wait behind it.
      lock.unlock();
      const std::optional<std::int64_t> estimate = estimate_of_();
      lock.lock();
      estimate_ = estimate;
      estimated = true;
    }
    const std::string text = line(rows, meter_->bytes(), seconds);
    if (on_terminal_) {
      // \r and "erase to the end of the line" (ECMA-48 EL): each line
      // drawn over the last, none left behind.
      terminal_ << '\r' << text << "\x1b[K" << std::flush;
      drawn = true;
    } else if (now >= log_at) {
      spdlog::info("{}", text);
      log_at = now + kLogEvery;
    }
  }
  if (drawn) terminal_ << "\r\x1b[K" << std::flush;
}

}  // namespace tidemark
