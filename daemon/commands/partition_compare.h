// Compares a partition table's done partitions with what its query
// returns on the source now (count and checksum per partition, by the
// query's column names), prints one line per partition and the backfill
// that rewrites those that differ. Used by `verify` (the most recent) and
// `reconcile` (all). Opens its own sessions; not thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>

#include "core/config/config_model.h"

namespace tidemark {

// `last`: compare only the most recent that many done partitions; nothing:
// every one. Returns whether all matched (true when none is done yet).
// Throws on a database or state error.
bool compare_partitions(const Config& config, const PipelineConfig& pipeline, const TableConfig& table,
                        std::optional<std::size_t> last, std::ostream& out);

}  // namespace tidemark
