#include "daemon/commands/chunk_logger.h"

#include <spdlog/spdlog.h>

namespace tidemark {

void ChunkLogger::on_chunk_committed(const TableKey& table, const Window& window, const ChunkCounts& counts,
                                     const CursorValue& watermark) {
  spdlog::debug("{}: chunk [{}, {}) committed, rows read {}, written {}, watermark {}", table.display(),
                cursor_to_text(window.lo), cursor_to_text(window.hi), counts.rows_read, counts.rows_written,
                cursor_to_text(watermark));
}

void ChunkLogger::on_range_committed(const TableKey& table, const LoadRange& range, int done, int all,
                                     const ChunkCounts& counts) {
  spdlog::info("{}: first load range {} ({}) committed, {} of {}: rows read {}, written {}", table.display(),
               range.index, page_range_text(range.pages), done, all, counts.rows_read, counts.rows_written);
}

}  // namespace tidemark
