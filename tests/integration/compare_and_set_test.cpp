// The compare-and-set contract (tests/contract) against PostgreSQL, with
// the state in the target's database and in one of its own;
// tests/core/run/compare_and_set_test.cpp runs it against the fakes.
#include <doctest/doctest.h>

#include "compare_and_set_contract.h"
#include "core/run/cancel_token.h"
#include "daemon/pg/data/pg_run_ports.h"
#include "daemon/pg/state/state_schema.h"
#include "pg_test_env.h"
#include "quiet_runs_contract.h"

namespace tidemark {

TEST_CASE("the compare-and-set contract: the PostgreSQL state store") {
  for (const bool state_in_target : {true, false}) {
    CAPTURE(state_in_target);
    testing::PgTestEnv env(state_in_target);
    const auto config = env.config(
        "pipeline: p\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
        "  - name: t\n    source_table: public.t\n    target_table: public.t\n    key: [id]\n    cursor: id\n");
    migrate_state_schema(env.state());
    const PipelineConfig& pipeline = *config->find_pipeline("p");
    CancelToken cancel;
    PipelineConnections connections;
    connections.open_state(*config);
    connections.open_data(*config, pipeline);
    PgRunPorts ports(connections, cancel);
    contract::check_compare_and_set({ports.state, ports.target, TableKey{"p", "t"}}, /*snapshot=*/false);
    contract::check_compare_and_set({ports.state, ports.target, TableKey{"p", "u"}}, /*snapshot=*/true);
    contract::check_quiet_runs({ports.state, ports.target, TableKey{"p", "v"}});
  }
}

}  // namespace tidemark
