// Plans the half-open cursor windows of one incremental run: where it
// starts (watermark - lookback, or initial, or the source's first row),
// where it ends (hi), how it is cut by max_window, and which watermark
// each committed chunk leaves. Pure; a value type, thread-safe.
#pragma once

#include <optional>

#include "core/watermark/cursor_value.h"
#include "core/result.h"

namespace tidemark {

struct WindowPlanInput {
  std::optional<CursorValue> watermark;   // stored; absent on a first run
  std::optional<CursorValue> initial;     // from the config, in the cursor's type
  std::optional<CursorValue> source_min;  // min(cursor) on the source; absent when empty
  std::optional<CursorValue> hi;          // absent: nothing to read (integer cursor, empty table)
  CursorSpan lookback;
  std::optional<CursorSpan> max_window;
};

class WindowPlan {
 public:
  // Fails when lookback or max_window does not fit the cursor type.
  static Result<WindowPlan> make(const WindowPlanInput& input);

  // The whole range read; empty when lo >= hi or there is no hi.
  std::optional<Window> range() const { return range_; }

  // The first chunk (previous == nullopt) or the chunk after `previous`;
  // nothing once hi is reached. Chunks are contiguous and cover range().
  std::optional<Window> chunk_after(const std::optional<Window>& previous) const;

  // The watermark a committed chunk leaves: its hi, but never below the
  // stored watermark (a lookback re-read must not move it back).
  CursorValue watermark_after(const Window& chunk) const;

  // The watermark after a run with no chunk at all: hi when it is ahead of
  // the stored value (the source clock says nothing below it is missing),
  // else the stored value; nothing when neither exists.
  std::optional<CursorValue> watermark_without_chunks() const;

 private:
  WindowPlan() = default;

  std::optional<CursorValue> watermark_;  // stored, else initial
  std::optional<CursorValue> hi_;
  std::optional<Window> range_;
  std::optional<CursorSpan> max_window_;
};

}  // namespace tidemark
