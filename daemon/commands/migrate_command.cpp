#include <ostream>

#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/pg/state/state_schema.h"

namespace tidemark {

int run_migrate(const ConfigPtr& config, const MigrateOptions&, std::ostream& out, std::ostream& err) {
  try {
    const auto state = connect_to(*config, config->daemon.state);
    const std::vector<int> applied = migrate_state_schema(*state);
    if (applied.empty()) {
      out << "state schema on " << config->daemon.state << " is up to date\n";
    } else {
      for (int version : applied) out << "applied state schema version " << version << '\n';
    }
    return kExitOk;
  } catch (const std::exception& e) {
    err << "tidemark migrate: " << e.what() << '\n';
    return kExitFailure;
  }
}

}  // namespace tidemark
