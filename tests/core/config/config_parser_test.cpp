// Table-driven tests of the configuration parser: every broken file names
// the line, column and key path of its problem. Expected positions were
// counted by hand from the YAML text.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/config/config_schema.h"

namespace tidemark {
namespace {

const char* const kDaemonYaml = R"(state: warehouse
connections:
  shop: { dsn: "dbname=shop" }
  warehouse: { dsn: "dbname=warehouse" }
)";

DaemonConfig test_daemon() {
  auto parsed = parse_daemon_config({"tidemark.yaml", kDaemonYaml});
  REQUIRE(parsed.errors.empty());
  return *parsed.value;
}

std::vector<ConfigError> pipeline_errors(const std::string& yaml) {
  return parse_config(test_daemon(), {{"p.yaml", yaml}}).errors;
}

struct BrokenCase {
  const char* name;
  const char* yaml;
  int line;
  int column;
  const char* key_path;
  const char* message;  // a fragment of the message
};

// Each pipeline file below is valid except for one thing.
const BrokenCase kBrokenPipelines[] = {
    {"deletes without reconcile", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { action: delete }
)",
     11, 14, "tables[0].deletes", "missing required key \"reconcile\""},
    {"deletes with a broken cron", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "61 * * * *" }
)",
     11, 27, "tables[0].deletes.reconcile", "61"},
    {"deletes with an unknown action", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *", action: purge }
)",
     11, 48, "tables[0].deletes.action", "purge"},
    {"action mark without mark_column", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *", action: mark }
)",
     11, 14, "tables[0].deletes", "missing required key \"mark_column\""},
    {"mark_column with action delete", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *", mark_column: deleted_at }
)",
     11, 53, "tables[0].deletes.mark_column", "only for action: mark"},
    {"mark_column that is a loaded column", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *", action: mark, mark_column: updated_at }
)",
     11, 67, "tables[0].deletes.mark_column", "is a loaded column"},
    {"unknown key in deletes", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *", acton: mark }
)",
     11, 40, "tables[0].deletes.acton", "unknown key \"acton\""},
    {"unknown top-level key", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
colour: blue
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     5, 1, "colour", "unknown key \"colour\""},
    {"unknown table key (typo)", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    primary_key: [order_id]
    key: [order_id]
    cursor: updated_at
)",
     9, 5, "tables[0].primary_key", "unknown key \"primary_key\""},
    {"missing pipeline name", R"(source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     1, 1, "", "missing required key \"pipeline\""},
    {"missing target", R"(pipeline: p
source: shop
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     1, 1, "", "missing required key \"target\""},
    {"unknown connection", R"(pipeline: p
source: shopp
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     2, 9, "source", "no connection named \"shopp\""},
    {"duration with words", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
stale_after: 2 hours
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     5, 14, "stale_after", "expected a duration such as 30s"},
    {"zero stale_after", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
stale_after: 0s
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     5, 14, "stale_after", "must be at least 1s"},
    {"negative lookback", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: -1h
)",
     11, 15, "tables[0].lookback", "expected a duration"},
    {"zero max_window", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    max_window: 0s
)",
     11, 17, "tables[0].max_window", "must be positive"},
    {"duration overflow", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: 99999999999999999999d
)",
     11, 15, "tables[0].lookback", "longer than the maximum of 3650d"},
    {"unknown time zone", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
timezone: Mars/Olympus_Mons
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     5, 11, "timezone", "unknown time zone \"Mars/Olympus_Mons\""},
    {"duplicate table name", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
  - name: orders
    source_table: public.orders_archive
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     11, 11, "tables[1].name", "duplicate table name \"orders\""},
    {"partition table without query", R"(pipeline: p
source: shop
target: warehouse
schedule: "0 1 * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    target_table: mart.daily
)",
     6, 5, "tables[0]", "missing required key \"query\""},
    {"incremental table without key", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    cursor: updated_at
)",
     6, 5, "tables[0]", "missing required key \"key\""},
    {"incremental table without cursor", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
)",
     6, 5, "tables[0]", "missing required key \"cursor\""},
    {"key given as text instead of a list", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: order_id
    cursor: updated_at
)",
     9, 10, "tables[0].key", "expected a list, got \"order_id\""},
    {"empty table list", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables: []
)",
     5, 9, "tables", "expected a non-empty list"},
    {"tables given as a map", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  orders: { source_table: public.orders }
)",
     6, 3, "tables", "expected a list, got a map"},
    {"SQL smuggled into a table name", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders;drop table x
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     7, 19, "tables[0].source_table", "unexpected \";drop table x\""},
    {"three-part table name", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: shop.public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     7, 19, "tables[0].source_table", "more than two parts"},
    {"unterminated quoted identifier", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: 'public."Odd Name'
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     7, 19, "tables[0].source_table", "unterminated quoted identifier"},
    {"unknown mode", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    mode: full_refresh
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     7, 11, "tables[0].mode", "\"full_refresh\" is not one of: incremental, partition, snapshot, append"},
    {"unknown partition unit", R"(pipeline: p
source: shop
target: warehouse
schedule: "0 1 * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: week }
    query: select * from t where day >= $1 and day < $2
    target_table: mart.daily
)",
     8, 37, "tables[0].partition.unit", "\"week\" is not one of: hour, day, month"},
    {"partition query without $2", R"(pipeline: p
source: shop
target: warehouse
schedule: "0 1 * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day }
    query: select * from t where day >= $1
    target_table: mart.daily
)",
     9, 12, "tables[0].query", "must use $1 (window lo) and $2 (window hi)"},
    {"query on an incremental table", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    query: select 1
)",
     11, 12, "tables[0].query", "only for mode: partition (incremental tables read source_table)"},
    {"unknown on_schema_change", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    on_schema_change: append
)",
     11, 23, "tables[0].on_schema_change", "\"append\" is not one of: fail, append_new_columns"},
    {"on_schema_change on a partition table", R"(pipeline: p
source: shop
target: warehouse
schedule: "0 1 * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day }
    query: select * from t where day >= $1 and day < $2
    target_table: mart.daily
    on_schema_change: append_new_columns
)",
     11, 23, "tables[0].on_schema_change", "only for mode: incremental or snapshot"},
    {"key on a partition table", R"(pipeline: p
source: shop
target: warehouse
schedule: "0 1 * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day }
    query: select * from t where day >= $1 and day < $2
    target_table: mart.daily
    key: [day]
)",
     11, 10, "tables[0].key", "only for mode: incremental or snapshot"},
    {"columns without the key column", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    columns: [status, updated_at]
    key: [order_id]
    cursor: updated_at
)",
     9, 14, "tables[0].columns", "key column \"order_id\" must be one of the columns"},
    {"duplicate YAML key", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    cursor: created_at
)",
     11, 5, "tables[0].cursor", "duplicate key \"cursor\""},
    {"YAML syntax error", R"(pipeline: p
source: shop: main
target: warehouse
tables: []
)",
     2, 13, "", "YAML syntax error: illegal map value"},
    {"initial that is not a date", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    initial: yesterday
)",
     11, 14, "tables[0].initial", "expected an ISO-8601 date or timestamp"},
    {"no schedule anywhere", R"(pipeline: p
source: shop
target: warehouse
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     5, 5, "tables[0]", "no schedule"},
    {"cron expression with a bad field", R"(pipeline: p
source: shop
target: warehouse
schedule: "*/5 25 * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     4, 11, "schedule", "hour field \"25\": 25 is out of range"},
    {"table schedule that can never fire", R"(pipeline: p
source: shop
target: warehouse
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    schedule: "0 0 31 4 *"
)",
     10, 15, "tables[0].schedule", "can never fire"},
    {"table name with a space", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: my orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)",
     6, 11, "tables[0].name", "\"my orders\" is not a valid name"},
    {"column listed twice", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id, ORDER_ID]
    cursor: updated_at
)",
     9, 21, "tables[0].key[1]", "column \"order_id\" is listed twice"},
    {"file that is a list, not a map", R"(- pipeline: p
  source: shop
)",
     1, 1, "", "expected a map of keys, got a list"},
    {"lookback that is a list", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: [1h]
)",
     11, 15, "tables[0].lookback", "expected a text value, got a list"},
    {"snapshot with a cursor", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: countries
    mode: snapshot
    source_table: public.countries
    target_table: raw.countries
    key: [country_id]
    cursor: updated_at
)",
     11, 13, "tables[0].cursor", "a snapshot run reads the whole table"},
    {"snapshot with deletes", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: countries
    mode: snapshot
    source_table: public.countries
    target_table: raw.countries
    key: [country_id]
    deletes: { reconcile: "0 3 * * *" }
)",
     11, 14, "tables[0].deletes", "deletes the rows gone from the source itself"},
    {"a partition table's lookback as a count", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: "select $1::date as day where $2 > $1"
    target_table: mart.daily
    lookback: 3
)",
     11, 15, "tables[0].lookback", "a partition table's lookback is a duration"},
    {"a partition table's lookback shorter than a partition", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: "select $1::date as day where $2 > $1"
    target_table: mart.daily
    lookback: 12h
)",
     11, 15, "tables[0].lookback", "must be 0s or at least 1d, which reaches the partition before the newest"},
    {"a partition table's reconcile that would mark rows", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: month }
    query: "select $1::date as day where $2 > $1"
    target_table: mart.daily
    deletes: { reconcile: "0 3 * * *", action: mark, mark_column: gone_at }
)",
     11, 48, "tables[0].deletes.action", "there is no row to mark"},
    {"an input that is no table", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: "select $1::date as day where $2 > $1"
    target_table: mart.daily
    inputs: [p.orders, p.ordres]
)",
     16, 24, "tables[1].inputs[1]", "no table \"p.ordres\" in this configuration"},
    {"a table that is its own input", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: "select $1::date as day where $2 > $1"
    target_table: mart.daily
    inputs: [p.daily]
)",
     11, 14, "tables[0].inputs[0]", "a table cannot be its own input"},
    {"an input named twice", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    inputs: [p.daily, p.daily]
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: "select $1::date as day where $2 > $1"
    target_table: mart.daily
)",
     11, 23, "tables[0].inputs[1]", "is named twice"},
    {"inputs in a cycle", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    inputs: [p.daily]
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: "select $1::date as day where $2 > $1"
    target_table: mart.daily
    inputs: [p.orders]
)",
     11, 14, "tables[0].inputs[0]", "inputs form a cycle (p.daily -> p.orders -> p.daily)"},
    {"a snapshot table with inputs", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: countries
    mode: snapshot
    source_table: public.countries
    target_table: raw.countries
    key: [country_id]
    inputs: [q.orders]
)",
     11, 13, "tables[0].inputs", "no window for an input to hold back"},
    {"append table with a key", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: events
    mode: append
    source_table: public.events
    target_table: raw.events
    cursor: id
    key: [id]
)",
     11, 10, "tables[0].key", "an append table inserts each row once"},
    {"append table with a lookback", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: events
    mode: append
    source_table: public.events
    target_table: raw.events
    cursor: id
    lookback: 100
)",
     11, 15, "tables[0].lookback", "would be inserted a second time"},
    {"append table without a cursor", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: events
    mode: append
    source_table: public.events
    target_table: raw.events
)",
     6, 5, "tables[0]", "missing required key \"cursor\": an append table inserts the rows past its cursor"},
    {"append table with deletes", R"(pipeline: p
source: shop
target: warehouse
schedule: "* * * * *"
tables:
  - name: events
    mode: append
    source_table: public.events
    target_table: raw.events
    cursor: id
    deletes: { reconcile: "0 3 * * *" }
)",
     11, 14, "tables[0].deletes", "never updated or deleted"},
    {"append table whose target does not hold the state", R"(pipeline: p
source: shop
target: shop
schedule: "* * * * *"
tables:
  - name: events
    mode: append
    source_table: public.events
    target_table: raw.events
    cursor: id
)",
     7, 11, "tables[0].mode",
     "needs the state in the target's database: pipeline p writes to connection shop and the state lives in warehouse; "
     "set state: shop in tidemark.yaml, or use mode: incremental with a key"},
};

const BrokenCase kBrokenDaemonFiles[] = {
    {"connection with two DSN sources", R"(state: warehouse
connections:
  shop: { dsn: "dbname=shop", dsn_env: SHOP_DSN }
  warehouse: { dsn: "dbname=warehouse" }
)",
     3, 9, "connections.shop", "give exactly one of dsn, dsn_env or dsn_file"},
    {"state names an unknown connection", R"(state: warehous
connections:
  warehouse: { dsn: "dbname=warehouse" }
)",
     1, 8, "state", "no connection named \"warehous\""},
    {"zero concurrent runs", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
max_concurrent_runs: 0
)",
     4, 22, "max_concurrent_runs", "expected a whole number from 1 to 256"},
    {"a history kept less than an hour", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
history: { retention: 10m }
)",
     4, 23, "history.retention", "must be at least 1h, got \"10m\""},
    {"an unknown key under history", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
history: { keep: 30d }
)",
     4, 12, "history.keep", "unknown key"},
    {"listen address without a port", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
metrics: { listen: localhost }
)",
     4, 20, "metrics.listen", "expected host:port"},
    // Issue 10, item 3: this passed validate and the daemon bound 231.1.1.1.
    {"regression: listen on an IPv4 address with a part above 255", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
metrics:
  listen: "999.1.1.1:19471"
)",
     5, 11, "metrics.listen", "\"999.1.1.1\" is not an IPv4 address (four numbers 0-255, such as 127.0.0.1)"},
    {"regression: listen on an IPv4 address of three parts", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
metrics: { listen: "10.1.1:9464" }
)",
     4, 20, "metrics.listen", "\"10.1.1\" is not an IPv4 address"},
    {"regression: listen on a bracketed name", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
metrics: { listen: "[localhost]:9464" }
)",
     4, 20, "metrics.listen", "\"localhost\" in brackets is not an IPv6 address"},
    {"regression: listen on a host name with a space", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
metrics: { listen: "my host:9464" }
)",
     4, 20, "metrics.listen", "\"my host\" is neither an IP address nor a host name"},
    {"unknown log level", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
log:
  level: verbose
)",
     5, 10, "log.level", "\"verbose\" is not one of: trace, debug, info, warn, error, off"},
    {"metrics key at the top level", R"(state: warehouse
connections:
  warehouse: { dsn: "dbname=warehouse" }
listen: "127.0.0.1:9464"
)",
     4, 1, "listen", "unknown key \"listen\""},
    {"missing connections", R"(state: warehouse
)",
     1, 1, "", "missing required key \"connections\""},
    {"connection name with a slash", R"(state: warehouse
connections:
  ware/house: { dsn: "dbname=warehouse" }
)",
     3, 3, "connections.ware/house", "is not a valid name"},
};

void check_single_error(const BrokenCase& c, const std::vector<ConfigError>& errors, const char* file) {
  INFO(std::string(c.name));
  REQUIRE(errors.size() == 1);
  const ConfigError& e = errors.front();
  INFO(std::string(e.to_string()));
  CHECK(e.file == file);
  CHECK(e.line == c.line);
  CHECK(e.column == c.column);
  CHECK(e.key_path == c.key_path);
  CHECK(e.message.find(c.message) != std::string::npos);
}

}  // namespace

TEST_CASE("every broken pipeline file is reported with its line, column and key path") {
  for (const BrokenCase& c : kBrokenPipelines) {
    check_single_error(c, pipeline_errors(c.yaml), "p.yaml");
  }
}

TEST_CASE("every broken daemon file is reported with its line, column and key path") {
  for (const BrokenCase& c : kBrokenDaemonFiles) {
    check_single_error(c, parse_daemon_config({"tidemark.yaml", c.yaml}).errors, "tidemark.yaml");
  }
}

TEST_CASE("all errors of a file are reported, not just the first") {
  const auto errors = pipeline_errors(R"(pipeline: p
source: nowhere
target: warehouse
schedule: "* * * * *"
stale_after: soon
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: -5m
    colour: red
)");
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].key_path == "stale_after");
  CHECK(errors[1].key_path == "tables[0].lookback");
  CHECK(errors[2].key_path == "tables[0].colour");
  CHECK(errors[3].key_path == "source");
}

TEST_CASE("regression: an append table whose target does not hold the state is told beside the file's other errors") {
  // It was told only once every other error of the file was mended.
  const auto errors = pipeline_errors(R"(pipeline: p
source: shop
target: shop
schedule: "* * * * *"
tables:
  - name: events
    mode: append
    source_table: public.events
    target_table: raw.events
    cursor: id
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: -5m
)");
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].key_path == "tables[1].lookback");
  CHECK(errors[1].key_path == "tables[0].mode");
  CHECK(errors[1].message.find("needs the state in the target's database") != std::string::npos);
}

TEST_CASE("a pipeline name used in two files names the first file") {
  const std::string yaml = R"(pipeline: same
source: shop
target: warehouse
schedule: "@daily"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)";
  const auto outcome = parse_config(test_daemon(), {{"a.yaml", yaml}, {"b.yaml", yaml}});
  REQUIRE(outcome.errors.size() == 1);
  CHECK(outcome.errors[0].file == "b.yaml");
  CHECK(outcome.errors[0].line == 1);
  CHECK(outcome.errors[0].key_path == "pipeline");
  CHECK(outcome.errors[0].message.find("already defined in a.yaml") != std::string::npos);
}

TEST_CASE("a valid pipeline gets its defaults and inherits the pipeline schedule") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: shop_orders
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: orders
    source_table: public."Orders"
    target_table: RAW.orders
    key: [order_id]
    cursor: updated_at
  - name: orders_shard_2
    source_table: shard2.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: 48h
    max_window: 1d
    initial: "2026-01-01T00:00:00Z"
    schedule: "*/1 * * * *"
    on_schema_change: append_new_columns
  - name: daily_revenue
    stale_after: 26h
    mode: partition
    partition: { column: ordered_at }
    query: select * from orders where ordered_at >= $1 and ordered_at < $2
    target_table: mart.daily_revenue
)"}});
  INFO((outcome.errors.empty() ? "" : outcome.errors[0].to_string()));
  REQUIRE(outcome.value);
  const PipelineConfig& p = outcome.value->pipelines.at(0);
  CHECK(p.timezone == "UTC");
  CHECK(p.zone == date::locate_zone("UTC"));
  CHECK(p.stale_after == std::chrono::hours(24));
  REQUIRE(p.tables.size() == 3);
  const TableConfig& orders = p.tables[0];
  CHECK(orders.mode == TableMode::Incremental);
  CHECK(orders.source_table->quoted() == "\"public\".\"Orders\"");
  CHECK(orders.target_table.quoted() == "\"raw\".\"orders\"");
  CHECK(orders.lookback == CursorSpan{CursorSpan::Kind::Duration, 0});
  CHECK_FALSE(orders.max_window);
  CHECK(orders.schedule->expression() == "*/5 * * * *");
  CHECK(orders.location.line == 6);
  const TableConfig& shard = p.tables[1];
  CHECK(shard.target_table == orders.target_table);  // several tables may share a target
  CHECK(shard.lookback == CursorSpan{CursorSpan::Kind::Duration, 48 * 3600});
  CHECK(*shard.max_window == CursorSpan{CursorSpan::Kind::Duration, 86400});
  CHECK(*shard.initial == "2026-01-01T00:00:00Z");
  CHECK(shard.schedule->expression() == "*/1 * * * *");
  CHECK(orders.on_schema_change == SchemaChangePolicy::Fail);  // the default
  CHECK(shard.on_schema_change == SchemaChangePolicy::AppendNewColumns);
  CHECK(orders.stale_after == std::chrono::hours(24));  // the pipeline's default
  const TableConfig& daily = p.tables[2];
  CHECK(daily.mode == TableMode::Partition);
  CHECK(daily.partition->unit == PartitionUnit::Day);
  CHECK(daily.partition->column == "ordered_at");
  CHECK(daily.stale_after == std::chrono::hours(26));
}

TEST_CASE("deletes: reconcile's cron, action delete by default, action mark with its column") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: shop
source: shop
target: warehouse
schedule: "*/5 * * * *"
timezone: Europe/Berlin
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *" }
  - name: customers
    source_table: public.customers
    target_table: raw.customers
    key: [customer_id]
    cursor: updated_at
    columns: [customer_id, name, updated_at]
    deletes:
      reconcile: "@daily"
      action: mark
      mark_column: deleted_at
  - name: events
    source_table: public.events
    target_table: raw.events
    key: [id]
    cursor: id
)"}});
  INFO((outcome.errors.empty() ? "" : outcome.errors[0].to_string()));
  REQUIRE(outcome.value);
  const PipelineConfig& p = outcome.value->pipelines.at(0);
  REQUIRE(p.tables[0].deletes);
  CHECK(p.tables[0].deletes->reconcile->expression() == "0 3 * * *");
  CHECK(p.tables[0].deletes->action == DeleteAction::Delete);
  CHECK(p.tables[0].deletes->mark_column.empty());
  REQUIRE(p.tables[1].deletes);
  CHECK(p.tables[1].deletes->action == DeleteAction::Mark);
  CHECK(p.tables[1].deletes->mark_column == "deleted_at");
  CHECK_FALSE(p.tables[2].deletes);
}

TEST_CASE("regression: deletes on a target table that another table also loads would delete its rows") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: shards
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: shard_1
    source_table: s1.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *" }
)"},
                                                    {"q.yaml", R"(pipeline: shards_2
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: shard_2
    source_table: s2.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)"}});
  REQUIRE(outcome.errors.size() == 1);
  const ConfigError& e = outcome.errors[0];
  CHECK(e.file == "p.yaml");
  CHECK(e.line == 11);
  CHECK(e.column == 14);
  CHECK(e.key_path == "tables[0].deletes");
  CHECK(e.message.find("is also loaded by shards_2.shard_2") != std::string::npos);
}

TEST_CASE("a snapshot table reads a source table on a key, without a cursor") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: p
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: countries
    mode: snapshot
    source_table: public.countries
    target_table: raw.countries
    key: [country_id]
    on_schema_change: append_new_columns
)"}});
  REQUIRE(outcome.errors.empty());
  const TableConfig& t = outcome.value->pipelines[0].tables[0];
  CHECK(t.mode == TableMode::Snapshot);
  CHECK(std::string(table_mode_name(t.mode)) == "snapshot");
  CHECK(reads_source_table(t.mode));
  CHECK(t.cursor.empty());
  CHECK(t.key == std::vector<std::string>{"country_id"});
  CHECK(t.on_schema_change == SchemaChangePolicy::AppendNewColumns);
}

TEST_CASE("tables without a key: a snapshot compared as a multiset, an append table past its cursor") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: p
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: readings
    mode: snapshot
    source_table: public.readings
    target_table: raw.readings
  - name: events
    mode: append
    source_table: public.events
    target_table: raw.events
    cursor: id
    max_window: 100000
    create_target: true
)"}});
  for (const auto& e : outcome.errors) MESSAGE(e.to_string());
  REQUIRE(outcome.errors.empty());
  const TableConfig& readings = outcome.value->pipelines[0].tables[0];
  CHECK(readings.mode == TableMode::Snapshot);
  CHECK(readings.key.empty());
  const TableConfig& events = outcome.value->pipelines[0].tables[1];
  CHECK(events.mode == TableMode::Append);
  CHECK(std::string(table_mode_name(events.mode)) == "append");
  CHECK(reads_source_table(events.mode));
  CHECK(events.key.empty());
  CHECK(events.cursor == "id");
  CHECK(events.lookback.is_zero());
  CHECK(events.create_target);
}

TEST_CASE("a snapshot table whose target table another table also loads is refused at its mode") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: p
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: countries
    mode: snapshot
    source_table: public.countries
    target_table: raw.countries
    key: [country_id]
  - name: more_countries
    source_table: other.countries
    target_table: raw.countries
    key: [country_id]
    cursor: updated_at
)"}});
  REQUIRE(outcome.errors.size() == 1);
  const ConfigError& e = outcome.errors[0];
  CHECK(e.line == 7);
  CHECK(e.column == 11);
  CHECK(e.key_path == "tables[0].mode");
  CHECK(e.message.find("is also loaded by p.more_countries: a snapshot run would delete their rows") !=
        std::string::npos);
}

TEST_CASE("create_target: the pipeline's default for its tables that read a source table, a table's own first") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: p
source: shop
target: warehouse
schedule: "*/5 * * * *"
create_target: true
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
  - name: countries
    mode: snapshot
    source_table: public.countries
    target_table: raw.countries
    key: [code]
    create_target: false
  - name: daily
    mode: partition
    partition: { column: day }
    query: select $1::date as day where $2 is not null
    target_table: mart.daily
)"}});
  REQUIRE(outcome.errors.empty());
  const PipelineConfig& p = outcome.value->pipelines[0];
  CHECK(p.find_table("orders")->create_target);
  CHECK_FALSE(p.find_table("countries")->create_target);
  CHECK_FALSE(p.find_table("daily")->create_target);  // a partition table's columns are its query's

  const auto refused = pipeline_errors(R"(pipeline: p
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day }
    query: select $1::date as day where $2 is not null
    target_table: mart.daily
    create_target: yes
)");
  REQUIRE(refused.size() == 2);
  CHECK(refused[0].key_path == "tables[0].create_target");
  CHECK(refused[0].message == "\"yes\" is not true or false");
  CHECK(refused[1].message.find("only for mode: incremental, snapshot or append") == 0);
}

TEST_CASE("integer cursors take counts for lookback and max_window") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: events
source: shop
target: warehouse
schedule: "@hourly"
tables:
  - name: events
    source_table: public.events
    target_table: raw.events
    key: [event_id]
    cursor: event_id
    lookback: 1000
    max_window: 50000
    initial: "0"
)"}});
  REQUIRE(outcome.value);
  const TableConfig& t = outcome.value->pipelines[0].tables[0];
  CHECK(t.lookback == CursorSpan{CursorSpan::Kind::Count, 1000});
  CHECK(*t.max_window == CursorSpan{CursorSpan::Kind::Count, 50000});
}

TEST_CASE("daemon defaults") {
  const DaemonConfig d = test_daemon();
  CHECK(d.pipelines_dir == "pipelines");
  CHECK(d.metrics.host == "127.0.0.1");
  CHECK(d.metrics.port == 9464);
  CHECK(d.max_concurrent_runs == 4);
  CHECK(d.log.level == LogLevel::Info);
  CHECK(d.log.format == LogFormat::Text);
  CHECK(d.history.retention == std::chrono::hours(24 * 30));
  REQUIRE(d.connections.size() == 2);
  CHECK(d.find_connection("shop")->value == "dbname=shop");
}

TEST_CASE("IPv6 listen addresses keep their brackets out of the host") {
  const auto parsed = parse_daemon_config({"t.yaml", R"(state: w
connections: { w: { dsn_file: /etc/tidemark/w.dsn } }
metrics: { listen: "[::1]:9100" }
)"});
  REQUIRE(parsed.value);
  CHECK(parsed.value->metrics.host == "::1");
  CHECK(parsed.value->metrics.port == 9100);
  CHECK(parsed.value->connections[0].source == DsnSource::File);
}

TEST_CASE("listen accepts IPv4, IPv6 and host names") {
  for (const char* listen : {"0.0.0.0:9464", "127.0.0.1:1", "[::]:9464", "[::1]:9464", "localhost:9464",
                             "metrics.example.com:65535"}) {
    INFO(std::string(listen));
    const auto parsed =
        parse_daemon_config({"t.yaml", std::string("state: w\nconnections: { w: { dsn: x } }\nmetrics: { listen: \"") +
                                           listen + "\" }\n"});
    for (const auto& e : parsed.errors) MESSAGE(e.to_string());
    CHECK(parsed.value);
  }
}

// Issue 10, item 1: a second document after "---" was dropped without a
// word, even when invalid; item 6: deep nesting said "bad file".
TEST_CASE("regression: a second YAML document in a daemon or pipeline file is an error at its line") {
  const auto daemon = parse_daemon_config({"t.yaml", "state: w\nconnections: { w: { dsn: x } }\n---\nstate: other\n"});
  REQUIRE(daemon.errors.size() == 1);
  CHECK(daemon.errors[0].to_string().find("t.yaml:3:1: a second YAML document") == 0);
  CHECK_FALSE(daemon.value);

  // The first document is still checked, and its errors come first.
  const auto pipeline = pipeline_errors("# leading comment\n---\npipeline: p\n---\nnot: valid\n");
  REQUIRE(pipeline.size() == 4);  // source, target, schedule, tables missing
  CHECK(pipeline[0].message.find("missing required key") == 0);
  CHECK(pipeline[3].to_string().find("p.yaml:4:1: a second YAML document") == 0);

  const auto empty_second = pipeline_errors("state: w\n...\n---\n");
  REQUIRE_FALSE(empty_second.empty());
  CHECK(empty_second.back().message.find("a second YAML document") == 0);
  CHECK(empty_second.back().line == 3);
  const auto after_end = pipeline_errors("state: w\n...\nmore: 1\n");
  REQUIRE_FALSE(after_end.empty());
  CHECK(after_end.back().line == 3);
  // A "..." closing the only document, comments and directives are fine.
  CHECK(parse_daemon_config({"t.yaml", "%YAML 1.2\n---\nstate: w\nconnections: { w: { dsn: x } }\n...\n# end\n"}).value);
  CHECK(parse_daemon_config({"t.yaml", "--- {state: w, connections: { w: { dsn: x } }}\n"}).value);

  // Found by tests/fuzz/config_fuzz: yaml-cpp's LoadAll never returned on
  // this; the second document is now found by its marker, never parsed.
  const auto looping = parse_daemon_config({"t.yaml", ",: w\nconn)'tions:columns}\n---\n: v\n"});
  CHECK_FALSE(looping.value);
  CHECK_FALSE(looping.errors.empty());
  // One document opened with "---" is fine.
  CHECK(parse_daemon_config({"t.yaml", "---\nstate: w\nconnections: { w: { dsn: x } }\n"}).value);
}

TEST_CASE("regression: YAML nested too deeply says so, not \"bad file\"") {
  const std::string deep = "state: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  const auto parsed = parse_daemon_config({"t.yaml", deep});
  REQUIRE(parsed.errors.size() == 1);
  INFO(parsed.errors[0].to_string());
  CHECK(parsed.errors[0].message.find("nested too deeply") != std::string::npos);
  CHECK(parsed.errors[0].message.find("bad file") == std::string::npos);
  CHECK(parsed.errors[0].line == 1);
}

// Issue 10, item 7: a pipeline of 400,000 tables took 32 s and 2.6 GB to
// validate.
TEST_CASE("regression: a pipeline of more than 10000 tables is an error saying to split it") {
  std::string yaml = "pipeline: p\nsource: shop\ntarget: warehouse\nschedule: '@daily'\ntables:\n";
  for (std::size_t i = 0; i <= kMaxTablesPerPipeline; ++i) yaml += "  - x\n";
  const auto errors = pipeline_errors(yaml);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].to_string() ==
        "p.yaml:6:3: tables: 10001 tables; a pipeline holds at most 10000: split it into several pipeline files");
}

// Found by tests/fuzz/config_fuzz: a pipeline file holding NUL bytes made
// yaml-cpp loop, eating memory, and `validate` never returned.
TEST_CASE("regression: a control character in a file is an error at its line, and never reaches the YAML parser") {
  const auto errors = pipeline_errors(std::string("pipeline: p\nsource: \0\0\0,\0e: x\0 \0\n", 29));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].to_string() ==
        "p.yaml:2:9: a control character (0x00): a configuration file is YAML text; is this the right file?");
  const auto escape = parse_daemon_config({"t.yaml", "state: w\x1b[2J\n"});
  REQUIRE(escape.errors.size() == 1);
  CHECK(escape.errors[0].message.find("a control character (0x1b)") == 0);
  // Tabs and CRLF line ends are text.
  CHECK(parse_daemon_config({"t.yaml", "state: w\t\r\nconnections: { w: { dsn: x } }\r\n"}).value);
}

// Found by tests/fuzz/config_fuzz: a table that is not a map, in a
// pipeline without a schedule, threw from yaml-cpp ("operator[] call on a
// scalar") and validate exited 1 with that text.
TEST_CASE("regression: a table that is not a map, without any schedule, is one clear error") {
  const auto errors = pipeline_errors("pipeline: p\nsource: shop\ntarget: warehouse\ntables:\n  - x\n");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].to_string() == "p.yaml:5:5: tables[0]: expected a map of keys, got \"x\"");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: deletes on public.orders beside a table loading the unqualified orders is refused") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: shards
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: shard_1
    source_table: s1.orders
    target_table: public.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *" }
  - name: shard_2
    source_table: s2.orders
    target_table: orders
    key: [order_id]
    cursor: updated_at
  - name: elsewhere
    source_table: s3.orders
    target_table: raw.other
    key: [order_id]
    cursor: updated_at
)"}});
  REQUIRE(outcome.errors.size() == 1);
  CHECK(outcome.errors[0].key_path == "tables[0].deletes");
  CHECK(outcome.errors[0].message.find("is also loaded by shards.shard_2") != std::string::npos);
}

TEST_CASE("marts: a partition table's lookback and reconcile, inputs resolved across files, dependents given back") {
  const auto outcome = parse_config(test_daemon(), {{"shop.yaml", R"(pipeline: shop.v2
source: shop
target: warehouse
schedule: "*/5 * * * *"
timezone: Europe/Berlin
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)"},
                                                    {"marts.yaml", R"(pipeline: marts
source: warehouse
target: warehouse
schedule: "5 0 * * *"
tables:
  - name: daily_revenue
    mode: partition
    partition: { column: day, unit: day }
    lookback: 3d
    query: "select $1::date as day, count(*) from raw.orders where ordered_at >= $1 and ordered_at < $2"
    target_table: mart.daily_revenue
    inputs: [shop.v2.orders]
    deletes: { reconcile: "0 4 * * 0" }
  - name: monthly
    mode: partition
    partition: { column: month, unit: month }
    lookback: 31d
    query: "select $1::date as month, sum(count) from mart.daily_revenue where day >= $1 and day < $2"
    target_table: mart.monthly
    inputs: [marts.daily_revenue, shop.v2.orders]
)"}});
  INFO((outcome.errors.empty() ? "" : outcome.errors[0].to_string()));
  REQUIRE(outcome.value);
  const Config& config = *outcome.value;
  const TableConfig& daily = *config.find_pipeline("marts")->find_table("daily_revenue");
  CHECK(daily.lookback == CursorSpan{CursorSpan::Kind::Duration, 3 * 86400});
  REQUIRE(daily.deletes);
  CHECK(daily.deletes->reconcile->expression() == "0 4 * * 0");
  REQUIRE(daily.inputs.size() == 1);
  CHECK(daily.inputs[0].display() == "shop.v2.orders");
  CHECK(daily.inputs[0].mode == TableMode::Incremental);
  CHECK(daily.inputs[0].zone->name() == "Europe/Berlin");
  const TableConfig& monthly = *config.find_pipeline("marts")->find_table("monthly");
  REQUIRE(monthly.inputs.size() == 2);
  CHECK(monthly.inputs[0].display() == "marts.daily_revenue");
  CHECK(monthly.inputs[0].mode == TableMode::Partition);
  const TableConfig& orders = *config.find_pipeline("shop.v2")->find_table("orders");
  REQUIRE(orders.dependents.size() == 2);
  CHECK(orders.dependents[0].display() == "marts.daily_revenue");
  CHECK(orders.dependents[1].display() == "marts.monthly");
  REQUIRE(daily.dependents.size() == 1);
  CHECK(daily.dependents[0].display() == "marts.monthly");
  CHECK(monthly.dependents.empty());
}

TEST_CASE("an input into a pipeline file that has errors of its own is not reported missing as well") {
  const auto outcome = parse_config(test_daemon(), {{"shop.yaml", R"(pipeline: shop
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: soon
)"},
                                                    {"marts.yaml", R"(pipeline: marts
source: warehouse
target: warehouse
schedule: "5 0 * * *"
tables:
  - name: daily_revenue
    mode: partition
    partition: { column: day, unit: day }
    query: "select $1::date as day where $2 > $1"
    target_table: mart.daily_revenue
    inputs: [shop.orders]
)"}});
  REQUIRE(outcome.errors.size() == 1);
  CHECK(outcome.errors[0].file == "shop.yaml");
  CHECK(outcome.errors[0].key_path == "tables[0].lookback");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("ranges: each key a snapshot table's own, else its pipeline's, else 1GB, 256MB and 2 workers") {
  const auto outcome = parse_config(test_daemon(), {{"p.yaml", R"(pipeline: p
source: shop
target: warehouse
schedule: "*/5 * * * *"
ranges: { above: 10GB, workers: 4 }
tables:
  - name: countries
    mode: snapshot
    source_table: public.countries
    target_table: raw.countries
    key: [code]
    ranges: { size: 64MB, workers: 1 }
  - name: accounts
    mode: snapshot
    source_table: public.accounts
    target_table: raw.accounts
    key: [id]
)"}});
  REQUIRE(outcome.errors.empty());
  const PipelineConfig& p = outcome.value->pipelines[0];
  // A key the table leaves out is the pipeline's.
  CHECK(p.find_table("countries")->ranges.above == std::int64_t{10} << 30);
  CHECK(p.find_table("countries")->ranges.size == std::int64_t{64} << 20);
  CHECK(p.find_table("accounts")->ranges.above == std::int64_t{10} << 30);
  CHECK(p.find_table("accounts")->ranges.size == std::int64_t{256} << 20);
  CHECK(p.find_table("countries")->ranges.workers == 1);
  CHECK(p.find_table("accounts")->ranges.workers == 4);
  CHECK(LoadRanges{}.workers == 2);
}

TEST_CASE("ranges: a size that is not one, a range below a page, no workers, an unknown key, or a mode without it, "
          "refused") {
  const auto errors = pipeline_errors(R"(pipeline: p
source: shop
target: warehouse
schedule: "*/5 * * * *"
tables:
  - name: countries
    mode: snapshot
    source_table: public.countries
    target_table: raw.countries
    key: [code]
    ranges: { above: 1.5GB, size: 4kB, workers: 0, parallel: 2 }
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    ranges: { above: 1GB }
)");
  REQUIRE(errors.size() == 5);
  CHECK(errors[0].key_path == "tables[0].ranges.above");
  CHECK(errors[0].message.find("\"1.5GB\" is not a size") == 0);
  CHECK(errors[1].key_path == "tables[0].ranges.size");
  CHECK(errors[1].message == "must be at least 8kB, got \"4kB\"");
  CHECK(errors[2].key_path == "tables[0].ranges.workers");
  CHECK(errors[3].key_path == "tables[0].ranges.parallel");
  CHECK(errors[4].key_path == "tables[1].ranges");
  CHECK(errors[4].message.find("only for mode: snapshot") == 0);
  for (const ConfigError& e : errors) CHECK(e.line > 0);
}

}  // namespace tidemark
