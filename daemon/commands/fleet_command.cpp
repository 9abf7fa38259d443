#include <fmt/format.h>
#include <fmt/ostream.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/fleet/table_owner.h"
#include "core/time/duration.h"
#include "core/time/instant_text.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/pg/state/member_registry.h"

namespace tidemark {
namespace {

std::string whole_second_text(DbInstant at) { return format_instant(std::chrono::floor<std::chrono::seconds>(at)); }

double seconds_between(DbInstant from, DbInstant to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

int run_fleet(const ConfigPtr& config, const FleetOptions& command_line, std::ostream& out, std::ostream& err) {
  FleetListing listing;
  try {
    const auto state = connect_to(*config, config->daemon.state);
    if (state_schema_exists_or_say(*state, *config, err)) {
      auto live = MemberRegistry(*state).live_members();
      if (!live) throw std::runtime_error(live.error());
      listing = std::move(live).value();
    }
  } catch (const std::exception& e) {
    err << "tidemark fleet: " << e.what() << '\n';
    return kExitFailure;
  }
  // What each member owns of this configuration's tables, by the list.
  std::map<std::string, int> owned;
  for (const PipelineConfig& p : config->pipelines) {
    for (const TableConfig& t : p.tables) {
      if (const FleetMember* owner = owning_member({p.name, t.name}, listing.members)) ++owned[owner->member_id];
    }
  }
  nlohmann::json members = nlohmann::json::array();
  for (const FleetMember& m : listing.members) {
    members.push_back({{"member_id", m.member_id},
                       {"host", m.host},
                       {"pid", m.pid},
                       {"version", m.version},
                       {"started_at", whole_second_text(m.started_at)},
                       {"lease_age_seconds", seconds_between(m.renewed_at, listing.db_now)},
                       {"lease_left_seconds", seconds_between(listing.db_now, m.lease_until)},
                       {"tables_owned", owned[m.member_id]}});
  }
  const int expected = config->daemon.fleet.expect_members;
  if (command_line.json) {
    nlohmann::json doc{{"members", members},
                       {"expect_members", expected > 0 ? nlohmann::json(expected) : nlohmann::json()}};
    out << doc.dump(2) << '\n';
    return kExitOk;
  }
  fmt::print(out, "{:<32} {:<24} {:>8} {:<10} {:<20} {:>9} {:>6}\n", "MEMBER", "HOST", "PID", "VERSION", "STARTED",
             "LEASE AGE", "TABLES");
  for (const auto& m : members) {
    fmt::print(out, "{:<32} {:<24} {:>8} {:<10} {:<20} {:>8.1f}s {:>6}\n", m["member_id"].get<std::string>(),
               m["host"].get<std::string>(), m["pid"].get<int>(), m["version"].get<std::string>(),
               m["started_at"].get<std::string>(), m["lease_age_seconds"].get<double>(),
               m["tables_owned"].get<int>());
  }
  if (listing.members.empty()) out << "no live member: no `tidemark serve` holds a lease\n";
  if (expected > 0 && static_cast<int>(listing.members.size()) < expected) {
    out << fmt::format("{} of the {} expected members (fleet.expect_members) are live\n", listing.members.size(),
                       expected);
  }
  return kExitOk;
}

}  // namespace tidemark
