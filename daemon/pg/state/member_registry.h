// The fleet's rows in tidemark.members: a member joins, renews its lease
// and leaves through here, and `fleet` and `status` list the live
// members. Every instant is the state database's clock. Owns no
// connection: it uses the one it is given, one thread at a time.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/fleet/fleet_member.h"
#include "core/fleet/member_lease.h"
#include "core/result.h"
#include "core/run/run_ports.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

// The live members, and the clock they were judged live by.
struct FleetListing {
  DbInstant db_now{};
  std::vector<FleetMember> members;  // oldest first
};

class MemberRegistry {
 public:
  explicit MemberRegistry(PgConnection& state) : state_(state) {}

  // Registers `me` (its id, host, pid and version) with a lease that ends
  // `lease` from now, or registers it again after its lease ended; rows
  // of members gone for a day are removed. Returns the database's clock
  // read in a transaction begun after the registration committed.
  Result<DbInstant> join(const FleetMember& me, std::chrono::seconds lease);

  // Extends the lease of `member_id` to `lease` from now, if it has not
  // ended, and lists the other live members, in one statement.
  Result<MemberLease::Renewal> renew(const std::string& member_id, std::chrono::seconds lease);

  // Removes the member's row: the others take its tables at their next
  // renewal, without waiting for its lease to end.
  Status leave(const std::string& member_id);

  Result<FleetListing> live_members();

 private:
  PgConnection& state_;
};

}  // namespace tidemark
