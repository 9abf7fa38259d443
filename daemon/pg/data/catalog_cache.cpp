#include "daemon/pg/data/catalog_cache.h"

#include "daemon/pg/data/relation_catalog.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

template <typename T>
Result<T> CatalogCache::answer(std::map<std::string, Entry<T>>& entries, PgConnection& connection,
                               const QualifiedName& relation, const std::string& config,
                               const std::function<Result<T>()>& read, const RelationVersions* versions) {
  const std::string where = connection.endpoint() + '\n' + relation.quoted() + '\n' + config;
  const auto kept = [&](const std::string& version) -> std::optional<T> {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries.find(where);
    if (it != entries.end() && it->second.version == version &&
        std::chrono::steady_clock::now() - it->second.read <= kKeepFor) {
      return it->second.value;
    }
    return std::nullopt;
  };
  // A version read a moment ago for many relations at once finds the kept
  // answer; anything else (a miss, a change) is settled by a version read
  // now, so that a fresh answer is never kept under an older version.
  if (versions != nullptr) {
    const auto known = versions->find(relation.quoted());
    if (known != versions->end() && known->second) {
      if (auto answer = kept(*known->second)) return *std::move(answer);
    }
  }
  const auto read_version = as_result([&] { return relation_version(connection, relation); });
  if (!read_version) return read_version.failure();
  const std::optional<std::string>& version = *read_version;
  if (!version) return read();
  if (auto answer = kept(*version)) return *std::move(answer);
  // Read outside the lock: other workers' tables need not wait for it.
  auto answer = read();
  if (answer) {
    const std::lock_guard<std::mutex> lock(mutex_);
    entries[where] = Entry<T>{*version, std::chrono::steady_clock::now(), *answer};
  }
  return answer;
}

Result<SourceTable> CatalogCache::source(PgConnection& connection, const QualifiedName& relation,
                                         const std::string& config, const std::function<Result<SourceTable>()>& read,
                                         const RelationVersions* versions) {
  return answer(sources_, connection, relation, config, read, versions);
}

Result<TargetTable> CatalogCache::target(PgConnection& connection, const QualifiedName& relation,
                                         const std::function<Result<TargetTable>()>& read,
                                         const RelationVersions* versions) {
  return answer(targets_, connection, relation, {}, read, versions);
}

}  // namespace tidemark
