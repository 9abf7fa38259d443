#include <ostream>

#include "core/config/table_modes.h"
#include "core/run/cancel_token.h"
#include "core/run/input_horizon.h"
#include "core/run/table_key.h"
#include "core/text/plain_text.h"
#include "core/text/sql_identifier.h"
#include "core/watermark/cursor_value.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/pg/state/state_schema.h"
#include "daemon/serve/job_ports.h"

namespace tidemark {
namespace {

// What watermark_resets.reason says after a forced rewind, so the audit
// shows it was done knowingly.
constexpr const char* kForcedNote = " [forced past the source clock]";

// The value of a read, or the exception the command reports.
template <class T>
T or_throw(Result<T> read) {
  if (!read) throw std::runtime_error(read.error());
  return std::move(read).value();
}

}  // namespace

int run_rewind(const ConfigPtr& config, const RewindOptions& command_line, std::ostream& out, std::ostream& err) {
  if (is_blank(command_line.reason)) {
    err << "tidemark rewind: --reason must say why; it is kept forever in tidemark.watermark_resets\n";
    return kExitUsage;
  }
  const PipelineConfig* pipeline = config->find_pipeline(command_line.pipeline);
  const TableConfig* table = pipeline ? pipeline->find_table(command_line.table) : nullptr;
  if (table == nullptr) {
    err << "tidemark rewind: no table " << command_line.pipeline << "." << command_line.table << '\n';
    return kExitUsage;
  }
  if (const TableModeSpec& mode = table_mode(table->mode); !mode.rewind) {
    err << mode_refusal("tidemark rewind", mode.mode, mode.rewind_refused, pipeline->name, table->name) << '\n';
    return kExitUsage;
  }
  if (const auto exit_code = prepare_state(*config, "rewind", err, /*migrate=*/false)) return *exit_code;
  const TableKey key{pipeline->name, table->name};
  try {
    const CancelToken never;
    JobPorts ports(*config, *pipeline, JobSessions{}, never, /*pipeline_time_zone=*/false);
    if (const auto& unreachable = ports.state_unreachable()) throw std::runtime_error(unreachable->message);
    if (const auto& unreachable = ports.data_unreachable()) throw std::runtime_error(unreachable->message);
    PgSource& source = *ports.pg_source();
    const auto source_table = source.inspect(*table);
    if (!source_table) throw std::runtime_error(source_table.error());
    const auto to = cursor_from_text(source_table->cursor_type, command_line.to);
    if (!to) {
      err << "tidemark rewind: --to: " << to.error() << '\n';
      return kExitUsage;
    }
    // A watermark claims that every row below it is loaded: past the
    // source's clock it claims rows that do not exist yet, and runs leave
    // it alone until the source catches up. Integer cursors have no clock.
    std::optional<CursorValue> passed_clock;
    if (to->type != CursorType::Integer) {
      // Never the host's clock.
      const CursorValue clock = or_throw(source.clock_now(to->type));
      if (clock < *to) passed_clock = clock;
    }
    if (passed_clock && !command_line.force) {
      err << "tidemark rewind: --to " << cursor_to_text(*to) << " is past the source's clock ("
          << cursor_to_text(*passed_clock) << " on " << pipeline->source
          << "): the watermark would claim rows that do not exist yet, and no run moves it until the source "
             "passes it; refused (add --force to set it anyway, recorded as forced)\n";
      return kExitUsage;
    }

    PgStateStore& state = ports.state();
    migrate_state_schema(state.connection());
    // For the preview only: the value the rewind replaces is read again
    // under the lock, and that one is what the audit records.
    const std::optional<std::string> old_value = or_throw(state.stored_watermark(key));
    const std::string new_value = cursor_to_text(*to);

    // The next run reads from the new value minus the lookback.
    const auto from = cursor_minus(*to, table->lookback);
    if (!from) throw std::runtime_error("lookback: " + from.error());
    const std::int64_t rows = or_throw(source.rows_from(*table, *from));
    out << key.display() << ": watermark " << old_value.value_or("(none)") << " -> " << new_value << '\n';
    out << "the next run re-reads " << rows << " source row" << (rows == 1 ? "" : "s") << " (" << table->cursor
        << " >= " << cursor_to_text(*from) << ")\n";
    if (old_value) {
      const auto old_parsed = cursor_from_text(source_table->cursor_type, *old_value);
      if (old_parsed && *old_parsed < *to) {
        out << "warning: this moves the watermark FORWARD: source rows in [" << *old_value << ", " << new_value
            << ") will never be loaded\n";
      }
    }
    if (passed_clock) {
      out << "warning: forced: " << new_value << " is past the source's clock (" << cursor_to_text(*passed_clock)
          << " on " << pipeline->source << "); no run moves the watermark until the source passes it\n";
    }
    if (command_line.dry_run) {
      out << "dry run: nothing changed\n";
      return kExitOk;
    }

    // Under the table's lock, so no run is in flight while the value changes.
    WatermarkRewind rewind{key, *to, command_line.reason + (passed_clock ? kForcedNote : ""), operating_system_user(),
                           downstream_recheck(*pipeline, *table, kCalendarStart, "rewound to " + new_value)};
    const WatermarkRewound rewound = or_throw(state.rewind_watermark(rewind));
    if (!rewound.done) {
      err << "tidemark rewind: a run of " << key.display() << " holds the lock; try again when it has finished\n";
      return kExitFailure;
    }
    if (rewound.old_value != old_value) {
      out << "note: the watermark was " << rewound.old_value.value_or("(none)")
          << " when the rewind took the lock (a run moved it meanwhile); that is the old value recorded\n";
    }
    out << "done; recorded in tidemark.watermark_resets" << (passed_clock ? " as forced past the source clock" : "")
        << '\n';
    for (const TableRef& dependent : table->dependents) {
      if (dependent.mode == TableMode::Partition) {
        out << "dependent " << dependent.display()
            << ": its done partitions are checked again, each once this table has passed its end again\n";
      } else {
        out << "dependent " << dependent.display() << " (" << table_mode_name(dependent.mode)
            << "): not rewound with it; rewind it too if it must read those rows again\n";
      }
    }
    return kExitOk;
  } catch (const std::exception& e) {
    err << "tidemark rewind: " << e.what() << '\n';
    return kExitFailure;
  }
}

}  // namespace tidemark
