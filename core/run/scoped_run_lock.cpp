#include "core/run/scoped_run_lock.h"

namespace tidemark {

Result<bool> ScopedRunLock::acquire(bool wait) {
  if (held_) std::abort();  // taking a lock twice would need two releases
  const Result<bool> taken = state_.lock(lock_, wait);
  held_ = taken.ok() && *taken;
  return taken;
}

void ScopedRunLock::release() {
  if (!held_) return;
  held_ = false;
  state_.unlock(lock_);
}

}  // namespace tidemark
