// What the catalogs said of the tables runs read and write, kept while
// their catalog rows stay as they were: a run of an unchanged table asks
// one short question (relation_version_sql) instead of reading every
// column, index and trigger again, which costs the database more than the
// rest of such a run. One per daemon, shared by its workers; thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/run/run_ports.h"
#include "core/text/sql_identifier.h"
#include "daemon/pg/data/relation_catalog.h"

namespace tidemark {

class PgConnection;

class CatalogCache {
 public:
  // What the catalogs say of `relation` on `connection`'s database, asked
  // with `config` (the configuration the answer depends on besides the
  // catalogs): the answer kept from an earlier read while the relation's
  // version (relation_catalog.h) is the one it was read at and it is
  // younger than kKeepFor, else `read()`'s, kept when it succeeds. A
  // relation that is not there is read every time: read() says so.
  // `versions`, when it names the relation, is its version as read a
  // moment ago (a batch reads its tables' at once): an answer kept at
  // that version is returned without asking; otherwise it is asked.
  Result<SourceTable> source(PgConnection& connection, const QualifiedName& relation, const std::string& config,
                             const std::function<Result<SourceTable>()>& read,
                             const RelationVersions* versions = nullptr);
  Result<TargetTable> target(PgConnection& connection, const QualifiedName& relation,
                             const std::function<Result<TargetTable>()>& read,
                             const RelationVersions* versions = nullptr);

  // An entry is read afresh at least this often, should a change slip
  // past the version (one no catalog row shows).
  static constexpr std::chrono::minutes kKeepFor{5};

 private:
  template <typename T>
  struct Entry {
    std::string version;
    std::chrono::steady_clock::time_point read;
    T value;
  };
  template <typename T>
  Result<T> answer(std::map<std::string, Entry<T>>& entries, PgConnection& connection, const QualifiedName& relation,
                   const std::string& config, const std::function<Result<T>()>& read,
                   const RelationVersions* versions);

  std::mutex mutex_;
  std::map<std::string, Entry<SourceTable>> sources_;
  std::map<std::string, Entry<TargetTable>> targets_;
};

}  // namespace tidemark
