// The merge of one batch of keys from both sides into reconcile's
// decisions: which target rows left the source (delete or mark), which
// source rows below the watermark the target lacks (missing: copy them
// again), which rows below the watermark the target holds with other
// values (changed: copy them again), and which marked target rows the
// source holds again below the watermark (restored: copy them again, which
// clears the mark). Pure; thread-safe.
#pragma once

#include <vector>

#include "core/reconcile/reconcile_ports.h"

namespace tidemark {

struct KeyDiff {
  std::vector<KeyRow> gone;      // target rows, not marked, whose key the source lacks
  std::vector<KeyRow> missing;   // source rows below the watermark the target lacks
  std::vector<KeyRow> changed;   // source rows below the watermark the target holds, not marked, with another hash
  std::vector<KeyRow> restored;  // marked target rows whose key is back in the source below the watermark
};

// Requires both inputs ordered by KeyRow::operator< without duplicates.
// Source rows at or above the watermark that the target lacks are not
// loaded yet: neither missing nor copied; one that changed there is the
// next load's too. A marked target row whose key is back above the
// watermark is left to the next load, whose upsert clears the mark.
KeyDiff diff_keys(const std::vector<KeyRow>& source, const std::vector<KeyRow>& target);

}  // namespace tidemark
