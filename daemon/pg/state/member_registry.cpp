#include "daemon/pg/state/member_registry.h"

#include "daemon/pg/libpq/pg_error.h"

namespace tidemark {
namespace {

// A timestamptz as microseconds since the Unix epoch: exact, and free of
// the session's DateStyle and TimeZone.
#define TIDEMARK_MICROS(column) "(extract(epoch from " column ") * 1000000)::bigint"

constexpr const char* kMemberColumns =
    "m.member_id, m.host, m.pid, m.version, " TIDEMARK_MICROS("m.started_at") ", " TIDEMARK_MICROS(
        "m.renewed_at") ", " TIDEMARK_MICROS("m.lease_until");

DbInstant micros(const PgResult& r, int row, int column) {
  return DbInstant(std::chrono::microseconds(r.integer(row, column)));
}

// The member in columns 0..6 of `row`.
FleetMember member_at(const PgResult& r, int row) {
  FleetMember m;
  m.member_id = r.text(row, 0);
  m.host = r.text(row, 1);
  m.pid = static_cast<int>(r.integer(row, 2));
  m.version = r.text(row, 3);
  m.started_at = micros(r, row, 4);
  m.renewed_at = micros(r, row, 5);
  m.lease_until = micros(r, row, 6);
  return m;
}

// The members in the rows of `r` (a left join's row without one is
// skipped) and the database's clock in column 7.
FleetListing listing_of(const PgResult& r) {
  FleetListing out;
  out.db_now = micros(r, 0, 7);
  for (int i = 0; i < r.rows(); ++i) {
    if (!r.is_null(i, 0)) out.members.push_back(member_at(r, i));
  }
  return out;
}

}  // namespace

Result<DbInstant> MemberRegistry::join(const FleetMember& me, std::chrono::seconds lease) {
  return as_result([&] {
    state_.exec("delete from tidemark.members where lease_until < now() - interval '1 day'");
    state_.exec(R"SQL(
insert into tidemark.members (member_id, host, pid, version, started_at, renewed_at, lease_until)
values ($1, $2, $3::integer, $4, now(), now(), now() + $5::bigint * interval '1 second')
on conflict (member_id) do update
  set host = excluded.host, pid = excluded.pid, version = excluded.version,
      renewed_at = excluded.renewed_at, lease_until = excluded.lease_until
)SQL",
                {me.member_id, me.host, std::to_string(me.pid), me.version, std::to_string(lease.count())});
    return micros(state_.exec("select " TIDEMARK_MICROS("now()")), 0, 0);
  });
}

Result<MemberLease::Renewal> MemberRegistry::renew(const std::string& member_id, std::chrono::seconds lease) {
  // The list is read by the statement that renews, in the transaction
  // whose start renewed_at records: whoever reads a renewed_at after its
  // own join knows this member has seen it.
  static const std::string kRenew = std::string(R"SQL(
with me as (
  update tidemark.members set renewed_at = now(), lease_until = now() + $2::bigint * interval '1 second'
  where member_id = $1 and lease_until > now()
  returning member_id)
select )SQL") + kMemberColumns +
                                    ", " TIDEMARK_MICROS("now()") R"SQL(, (select count(*) from me)
from (select 1) one
left join tidemark.members m on m.lease_until > now() and m.member_id <> $1
order by m.started_at, m.member_id
)SQL";
  return as_result([&] {
    const PgResult r = state_.exec_prepared(kRenew, {member_id, std::to_string(lease.count())});
    FleetListing others = listing_of(r);
    MemberLease::Renewal out;
    out.extended = r.integer(0, 8) == 1;
    out.db_now = others.db_now;
    out.others = std::move(others.members);
    return out;
  });
}

Status MemberRegistry::leave(const std::string& member_id) {
  return as_result([&] {
    state_.exec("delete from tidemark.members where member_id = $1", {member_id});
    return ok_status();
  });
}

Result<FleetListing> MemberRegistry::live_members() {
  static const std::string kList = std::string("select ") + kMemberColumns + ", " TIDEMARK_MICROS("now()") R"SQL(
from (select 1) one
left join tidemark.members m on m.lease_until > now()
order by m.started_at, m.member_id
)SQL";
  return as_result([&] { return listing_of(state_.exec(kList)); });
}

}  // namespace tidemark
