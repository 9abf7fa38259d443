// The ports one run works through, over the sessions of its
// PipelineConnections (opened first): the state store, the source and the
// target, each on the session it belongs to. Owned by the run, on its
// thread; must not outlive the connections.
#pragma once

#include <functional>
#include <string>

#include "core/run/cancel_token.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/data/pg_target.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/state/pg_state_store.h"

namespace tidemark {

struct PgRunPorts {
  // `warn` hears what the source finds worth a warning (a role that cannot
  // see other sessions); nothing: it is dropped.
  PgRunPorts(PipelineConnections& connections, const CancelToken& cancel,
             std::function<void(const std::string&)> warn = nullptr)
      : state(*connections.state),
        source(connections.make_source(std::move(warn), &cancel)),
        target(connections.target(), source, &state, cancel,
               connections.shared != nullptr ? &connections.shared->catalogs : nullptr) {}
  PgRunPorts(const PgRunPorts&) = delete;
  PgRunPorts& operator=(const PgRunPorts&) = delete;

  PgStateStore state;
  PgSource source;
  PgTarget target;
};

}  // namespace tidemark
