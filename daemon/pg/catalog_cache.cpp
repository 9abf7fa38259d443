#include "daemon/pg/catalog_cache.h"

#include "daemon/pg/pg_connection.h"
#include "daemon/pg/relation_catalog.h"

namespace tidemark {

template <typename T>
Result<T> CatalogCache::answer(std::map<std::string, Entry<T>>& entries, PgConnection& connection,
                               const QualifiedName& relation, const std::string& config,
                               const std::function<Result<T>()>& read, const RelationVersions* versions) {
  std::optional<std::string> version;
  const auto known = versions != nullptr ? versions->find(relation.quoted()) : RelationVersions::const_iterator();
  if (versions != nullptr && known != versions->end()) {
    version = known->second;
  } else {
    try {
      version = relation_version(connection, relation);
    } catch (const PgError& e) {
      return e.as_error();
    }
  }
  if (!version) return read();
  const std::string where = connection.endpoint() + '\n' + relation.quoted() + '\n' + config;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries.find(where);
    if (it != entries.end() && it->second.version == *version &&
        std::chrono::steady_clock::now() - it->second.read <= kKeepFor) {
      return it->second.value;
    }
  }
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
