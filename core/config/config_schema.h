// The configuration schema: every key of tidemark.yaml and of a pipeline
// file with its type, default, bounds and meaning, in one place that the
// parser, `tidemark validate` and docs/configuration.md all follow.
// Immutable static tables; thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "core/config/config_model.h"
#include "core/config/config_reader.h"

namespace tidemark {

// The most tables one pipeline file may list (validating 400,000 took
// half a minute): more is an error asking to split the file.
inline constexpr std::size_t kMaxTablesPerPipeline = 10000;

const MapSchema<DaemonConfig>& daemon_schema();
const MapSchema<ConnectionConfig>& connection_schema();
const MapSchema<MetricsConfig>& metrics_schema();
// The file metrics.web_config names, in exporter-toolkit's format.
const MapSchema<WebConfig>& web_config_schema();
const MapSchema<TlsServerConfig>& tls_server_config_schema();
const MapSchema<LogConfig>& log_schema();
const MapSchema<PipelineConfig>& pipeline_schema();
const MapSchema<TableConfig>& table_schema();
const MapSchema<PartitionSpec>& partition_schema();
const MapSchema<DeletesConfig>& deletes_schema();
const MapSchema<LoadRanges>& ranges_schema();

// The schema as Markdown tables, one per map, for docs/configuration.md.
std::string render_schema_reference();

}  // namespace tidemark
