#include "daemon/pg/data/pg_key_side.h"

#include "core/sql/reconcile_statements.h"
#include "core/sql/row_fingerprint.h"

namespace tidemark {

void normalise_key_text_session(PgConnection& connection) {
  // The rest of what text depends on is pinned on every session
  // (kPinnedSessionSettings); the time zone is each side's own. The
  // pool's reset sets it back.
  connection.exec("set timezone to 'UTC'");
  connection.mark_session_changed();
}

void PgKeySide::normalise() {
  if (normalised_) return;
  session_timezone_ = connection_.exec("show timezone").text(0, 0);
  normalise_key_text_session(connection_);
  normalised_ = true;
}

void PgKeySide::restore_timezone() {
  if (!normalised_) return;
  connection_.exec("select set_config('timezone', $1, false)", {session_timezone_});
  normalised_ = false;
}

Result<std::int64_t> PgKeySide::estimate_rows() {
  return as_result([&] {
    const QualifiedName& name = role_ == Role::Source ? *table_.source_table : table_.target_table;
    const KeySideQueries q = role_ == Role::Source ? source_key_queries(table_, CursorValue{}, "0")
                                                   : target_key_queries(table_, mark_column_, "0");
    return connection_.exec(q.estimate, {name.quoted()}).integer(0, 0);
  });
}

Status PgKeySide::send_bucket_sums(std::int64_t buckets, const KeyCompare& compare) {
  return as_result([&] {
    normalise();
    const std::string row_hash = row_hash_sql(compare.columns, hash_record_);
    const KeySideQueries q = role_ == Role::Source ? source_key_queries(table_, compare.watermark, row_hash)
                                                   : target_key_queries(table_, mark_column_, row_hash);
    connection_.send(q.bucket_sums, {std::to_string(buckets)});
    return ok_status();
  });
}

Result<std::vector<BucketSum>> PgKeySide::bucket_sums() {
  return as_result([&] {
    const PgResult r = connection_.finish();
    std::vector<BucketSum> out;
    out.reserve(static_cast<std::size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) out.push_back(BucketSum{r.integer(i, 0), r.integer(i, 1), r.text(i, 2)});
    return out;
  });
}

namespace {

constexpr const char* kListing = "tidemark_keys";

}  // namespace

Status PgKeySide::send_open_keys(std::int64_t buckets, const std::vector<std::int64_t>& which,
                                 const KeyCompare& compare) {
  return as_result([&] {
    normalise();
    close_keys();
    const std::string row_hash = row_hash_sql(compare.columns, hash_record_);
    const std::string listing = role_ == Role::Source
                                    ? source_key_listing(table_, compare.watermark, row_hash, buckets, which)
                                    : target_key_listing(table_, mark_column_, row_hash, buckets, which);
    connection_.send(std::string("DECLARE ") + kListing + " NO SCROLL CURSOR WITH HOLD FOR " + listing, {});
    return ok_status();
  });
}

Status PgKeySide::open_keys() {
  return as_result([&] {
    connection_.finish();
    listing_ = true;
    // The listing's key text was computed in UTC when it was declared;
    // what comes after reads and writes rows as a load does, in the
    // session's own time zone: the key columns the listing returns, the
    // checks by value and the copies (a source timestamp loaded into a
    // target timestamptz was read in the target's zone).
    restore_timezone();
    return ok_status();
  });
}

Result<std::vector<KeyRow>> PgKeySide::next_keys(std::size_t most) {
  return as_result([&] {
    const PgResult r = connection_.exec("FETCH FORWARD " + std::to_string(most) + " FROM " + kListing);
    const int key_columns = static_cast<int>(table_.key.size());
    std::vector<KeyRow> out;
    out.reserve(static_cast<std::size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
      KeyRow row;
      row.bucket = r.integer(i, 0);
      row.text = r.text(i, 1);
      row.flag = r.boolean(i, 2);
      row.hash = r.integer(i, 3);
      for (int c = 0; c < key_columns; ++c) row.columns.push_back(r.optional_text(i, 4 + c));
      out.push_back(std::move(row));
    }
    return out;
  });
}

Result<std::vector<std::size_t>> PgKeySide::held_now(const std::vector<KeyRow>& keys) {
  return as_result([&] {
    if (keys.empty()) return std::vector<std::size_t>{};
    const QualifiedName& name = role_ == Role::Source ? *table_.source_table : table_.target_table;
    if (key_types_.empty()) {
      // Each key column's type on this side, looked up once.
      for (const std::string& column : table_.key) {
        const PgResult t = connection_.exec(
            "SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = $1::regclass"
            " AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped",
            {name.quoted(), column});
        if (t.rows() != 1) throw PgError(ErrorKind::Transient, name.display() + " has no key column " + column);
        key_types_.push_back(t.text(0, 0));
      }
    }
    std::vector<KeyColumnType> types;
    for (std::size_t i = 0; i < key_types_.size(); ++i) {
      types.push_back(KeyColumnType{key_types_[i], keys_hold_null(keys, i)});
    }
    const std::string sql = held_keys(table_, name, types, role_ == Role::Target ? mark_column_ : std::string());
    std::vector<std::size_t> out;
    try {
      const PgResult r = connection_.exec(sql, {keys_json(table_.key, keys)});
      out.reserve(static_cast<std::size_t>(r.rows()));
      for (int i = 0; i < r.rows(); ++i) out.push_back(static_cast<std::size_t>(r.integer(i, 0) - 1));
      return out;
    } catch (const PgError& e) {
      // A source key the target's key type cannot hold (too long, out of
      // range, not its syntax) is not held there: it is missing, and its
      // copy will say why it cannot be written. Ask key by key to find it.
      // On the source side a key it cannot read stays an error: a guess
      // there would delete a target row.
      if (role_ != Role::Target || e.sqlstate().rfind("22", 0) != 0) throw;
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      try {
        if (connection_.exec(sql, {keys_json(table_.key, {keys[i]})}).rows() > 0) out.push_back(i);
      } catch (const PgError& e) {
        if (e.sqlstate().rfind("22", 0) != 0) throw;
      }
    }
    return out;
  });
}

void PgKeySide::close_keys() {
  if (!listing_) return;
  listing_ = false;
  try {
    connection_.rollback_quietly();
    connection_.exec(std::string("CLOSE ") + kListing);
  } catch (const PgError&) {
    connection_.poison();  // a cursor nobody closed must not stay on a pooled session
  }
}

}  // namespace tidemark
