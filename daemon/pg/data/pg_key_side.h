// The KeySide over one PostgreSQL session (core/reconcile/reconcile_ports.h):
// a table's keys as bucket aggregates and as ordered key lists, with the
// queries of core/sql/reconcile_statements. It sets the session's time
// zone to UTC while it aggregates and lists, so that a key prints as the
// same text on both sides (every other setting text depends on is pinned
// on every session); once the listing is computed the session has its
// own time zone back, in which loads read and write. Owns no connection; used by one reconcile on one thread.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/reconcile/reconcile_ports.h"
#include "core/sql/reconcile_statements.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

class PgKeySide final : public KeySide {
 public:
  enum class Role { Source, Target };
  // `hash_record`: both sides' servers hash a record (row_fingerprint.h),
  // the same on both. `mark_column` (target, action mark): rows with it
  // set count as deleted already.
  PgKeySide(PgConnection& connection, const TableConfig& table, Role role, bool hash_record,
            std::string mark_column = {})
      : connection_(connection),
        table_(table),
        role_(role),
        hash_record_(hash_record),
        mark_column_(std::move(mark_column)) {}

  Result<std::int64_t> estimate_rows() override;
  Status send_bucket_sums(std::int64_t buckets, const KeyCompare& compare) override;
  Result<std::vector<BucketSum>> bucket_sums() override;
  // The listing is a cursor WITH HOLD: its rows are computed in one pass
  // when it is declared, outside any transaction, and stay readable while
  // the units of work on the same session begin and commit between pieces.
  Status send_open_keys(std::int64_t buckets, const std::vector<std::int64_t>& which,
                        const KeyCompare& compare) override;
  Status open_keys() override;
  Result<std::vector<KeyRow>> next_keys(std::size_t most) override;
  void close_keys() override;
  Result<std::vector<std::size_t>> held_now(const std::vector<KeyRow>& keys) override;

 private:
  // Sets the output settings key text depends on, once, keeping the
  // session's time zone to restore. Throws PgError.
  void normalise();
  // Gives the session its own time zone back. Throws PgError.
  void restore_timezone();

  PgConnection& connection_;
  const TableConfig& table_;
  Role role_;
  bool hash_record_;
  std::string mark_column_;
  bool normalised_ = false;
  std::string session_timezone_;  // the session's time zone before normalise()
  bool listing_ = false;  // the cursor is declared
  std::vector<std::string> key_types_;  // held_now's: each key column's SQL type, once looked up
};

// The time zone a key's text is computed in, identical on every session
// that compares keys.
void normalise_key_text_session(PgConnection& connection);

}  // namespace tidemark
