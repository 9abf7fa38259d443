// Compares a partition table's most recent done partitions with what its
// query returns on the source now (count and checksum per partition, by
// the query's columns, through Target::compare_partition), prints one line
// per partition and the commands that rewrite those that differ: `verify`
// of a partition table. Opens its own sessions; not thread-safe.
#pragma once

#include <cstddef>
#include <ostream>

#include "core/config/config_model.h"

namespace tidemark {

// Compares the most recent `last` done partitions. Returns whether all
// matched (true when none is done yet). Throws on a database or state
// error.
bool compare_partitions(const Config& config, const PipelineConfig& pipeline, const TableConfig& table,
                        std::size_t last, std::ostream& out);

}  // namespace tidemark
