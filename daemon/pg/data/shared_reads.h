// What the runs of one daemon read once and share: the catalogs' answers
// about their tables and the sources' recent clocks and open transactions.
// Owned by serve's worker launcher (tests own one too); each member is
// thread-safe.
#pragma once

#include "daemon/pg/data/catalog_cache.h"
#include "daemon/pg/data/source_moments.h"

namespace tidemark {

struct SharedReads {
  CatalogCache catalogs;
  SourceMoments moments;
};

}  // namespace tidemark
