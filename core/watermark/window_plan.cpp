#include "core/watermark/window_plan.h"

#include <algorithm>

namespace tidemark {

Result<WindowPlan> WindowPlan::make(const WindowPlanInput& input) {
  WindowPlan plan;
  // Without a stored watermark, `initial` is the user's claim that nothing
  // below it is wanted: a run that reads nothing keeps it rather than hi.
  plan.watermark_ = input.watermark ? input.watermark : input.initial;
  plan.hi_ = input.hi;
  plan.max_window_ = input.max_window;
  if (input.hi && input.max_window) {
    // Checks that max_window fits the cursor type before any chunk is cut.
    const auto probe = cursor_plus(*input.hi, *input.max_window);
    if (!probe) return permanent_error("max_window: " + probe.error());
  }
  std::optional<CursorValue> lo;
  if (input.watermark) {
    const auto start = cursor_minus(*input.watermark, input.lookback);
    if (!start) return permanent_error("lookback: " + start.error());
    lo = *start;
  } else if (input.initial) {
    lo = input.initial;
  } else {
    lo = input.source_min;
  }
  if (input.hi && lo && *lo < *input.hi) plan.range_ = Window{*lo, *input.hi};
  return plan;
}

std::optional<Window> WindowPlan::chunk_after(const std::optional<Window>& previous) const {
  if (!range_) return std::nullopt;
  const CursorValue lo = previous ? previous->hi : range_->lo;
  if (!(lo < range_->hi)) return std::nullopt;
  CursorValue hi = range_->hi;
  if (max_window_) {
    const CursorValue limit = *cursor_plus(lo, *max_window_);  // checked in make()
    if (limit < hi) hi = limit;
  }
  return Window{lo, hi};
}

CursorValue WindowPlan::watermark_after(const Window& chunk) const {
  if (watermark_ && chunk.hi < *watermark_) return *watermark_;
  return chunk.hi;
}

std::optional<CursorValue> WindowPlan::watermark_without_chunks() const {
  if (watermark_ && hi_) return std::max(*watermark_, *hi_);
  return watermark_ ? watermark_ : hi_;
}

}  // namespace tidemark
