// The evidence behind "libpq, not libpqxx" (docs/ARCHITECTURE.md, "The
// PostgreSQL client"): tidemark's client paths through libpqxx 6.4 (Debian
// 12's) and through libpq, side by side. Not part of the build and not a
// tidemark dependency: bench/libpqxx_probe.sh compiles it by hand when
// libpqxx-dev is installed. Single-threaded; one experiment per process.
//   libpqxx_probe <experiment> <dsn> [args]
#include <libpq-fe.h>
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <pqxx/pqxx>
#include <pqxx/tablewriter>
#include <string>

// inhibit_reactivation and tablewriter, the only ways to a session that
// never reconnects and to a public raw COPY writer, are both deprecated
// in 6.4: a -Werror build fails on them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

long max_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

void libpq_exec(PGconn* conn, const std::string& sql) {
  PGresult* r = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(r);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_COPY_OUT &&
      status != PGRES_COPY_IN) {
    std::cout << "  libpq error: " << first_line(PQresultErrorMessage(r)) << "\n";
  }
  PQclear(r);
}

// Terminates the session and waits until its process is gone.
void kill_session(const std::string& dsn, int pid) {
  PGconn* admin = PQconnectdb(dsn.c_str());
  libpq_exec(admin, "select pg_terminate_backend(" + std::to_string(pid) + ", 10000)");
  PQfinish(admin);
}

// A session holding an advisory lock (as a run does) is killed; what do
// the next statements see?
void after_kill(const std::string& dsn, bool inhibit) {
  pqxx::connection conn(dsn);
  if (inhibit) conn.inhibit_reactivation(true);
  {
    pqxx::nontransaction tx(conn);
    tx.exec("select pg_advisory_lock(42)");
  }
  std::cout << "  session " << conn.backendpid() << " holds advisory lock 42; killed\n";
  kill_session(dsn, conn.backendpid());
  for (int i = 1; i <= 3; ++i) {
    try {
      pqxx::nontransaction tx(conn);
      const pqxx::result r = tx.exec(
          "select pg_backend_pid(), exists (select 1 from pg_locks where locktype = 'advisory' and objid = 42"
          " and pid = pg_backend_pid())");
      std::cout << "  statement " << i << ": succeeded in session " << r[0][0].c_str() << ", holds the lock: "
                << r[0][1].c_str() << "\n";
    } catch (const std::exception& e) {
      std::cout << "  statement " << i << ": " << first_line(e.what()) << "\n";
    }
  }
}

// tidemark's own BEGIN ... COMMIT (its target transaction spans the COPY,
// the upsert and the watermark's compare-and-set), the session killed
// inside it.
void killed_in_transaction(const std::string& dsn, bool inhibit) {
  {
    pqxx::connection setup(dsn);
    pqxx::nontransaction tx(setup);
    tx.exec("drop table if exists probe_items; create table probe_items (n int)");
  }
  pqxx::connection conn(dsn);
  if (inhibit) conn.inhibit_reactivation(true);
  const auto step = [&](const std::string& sql) {
    try {
      pqxx::nontransaction tx(conn);
      tx.exec(sql);
      std::cout << "  " << sql << ": succeeded in session " << conn.backendpid() << "\n";
    } catch (const std::exception& e) {
      std::cout << "  " << sql << ": " << first_line(e.what()) << "\n";
    }
  };
  step("BEGIN");
  step("insert into probe_items values (1)");
  kill_session(dsn, conn.backendpid());
  std::cout << "  (session killed)\n";
  step("insert into probe_items values (2)");
  step("insert into probe_items values (3)");
  step("COMMIT");
  pqxx::connection check(dsn);
  pqxx::nontransaction tx(check);
  std::cout << "  rows in probe_items: " << tx.exec("select count(*) from probe_items")[0][0].c_str() << "\n";
}

// A window as tidemark copies it: COPY takes no parameters, so its bounds
// are typed literals made of digits only.
const char* const kWindow =
    "(SELECT order_id, customer_id, status, amount, updated_at FROM public.orders"
    " WHERE updated_at >= ('epoch'::timestamptz + 0 * interval '1 microsecond')"
    " AND updated_at < ('epoch'::timestamptz + 4102444800000000 * interval '1 microsecond'))";

// Today's path: each PQgetCopyData buffer goes straight to PQputCopyData.
void copy_libpq(const std::string& source_dsn, const std::string& target_dsn) {
  PGconn* source = PQconnectdb(source_dsn.c_str());
  PGconn* target = PQconnectdb(target_dsn.c_str());
  libpq_exec(target, "truncate raw.orders");
  const double start = seconds();
  libpq_exec(target, "BEGIN");
  libpq_exec(source, std::string("COPY ") + kWindow + " TO STDOUT");
  libpq_exec(target, "COPY raw.orders FROM STDIN");
  char* data = nullptr;
  int n = 0;
  while ((n = PQgetCopyData(source, &data, 0)) > 0) {
    PQputCopyData(target, data, n);
    PQfreemem(data);
  }
  while (PGresult* r = PQgetResult(source)) PQclear(r);
  PQputCopyEnd(target, nullptr);
  PGresult* done = PQgetResult(target);
  const std::string rows = PQcmdTuples(done);
  PQclear(done);
  while (PGresult* r = PQgetResult(target)) PQclear(r);
  libpq_exec(target, "COMMIT");
  std::cout << "  libpq PQgetCopyData -> PQputCopyData: " << rows << " rows, " << seconds() - start << " s\n";
  PQfinish(source);
  PQfinish(target);
}

// libpqxx 6.4's raw path: stream_from::get_raw_line into
// tablewriter::write_raw_line (stream_to's is private), on nontransactions
// that carry tidemark's own BEGIN and COMMIT.
void copy_libpqxx(const std::string& source_dsn, const std::string& target_dsn) {
  pqxx::connection source(source_dsn);
  pqxx::connection target(target_dsn);
  source.inhibit_reactivation(true);
  target.inhibit_reactivation(true);
  {
    pqxx::nontransaction tx(target);
    tx.exec("truncate raw.orders");
  }
  const double start = seconds();
  pqxx::nontransaction source_tx(source);
  pqxx::nontransaction target_tx(target);
  target_tx.exec("BEGIN");
  long rows = 0;
  {
    pqxx::stream_from from(source_tx, kWindow);  // "COPY " + kWindow + " TO STDOUT"
    pqxx::tablewriter to(target_tx, "raw.orders");
    std::string line;
    while (from.get_raw_line(line)) {
      // get_raw_line keeps the row's newline and write_raw_line adds one.
      if (!line.empty() && line.back() == '\n') line.pop_back();
      to.write_raw_line(line);
      ++rows;
    }
    from.complete();
    to.complete();
  }
  target_tx.exec("COMMIT");
  std::cout << "  libpqxx get_raw_line -> tablewriter::write_raw_line: " << rows << " rows, " << seconds() - start
            << " s\n";
}

// libpqxx 6.4's own pass-through between two connections.
void copy_libpqxx_stream(const std::string& source_dsn, const std::string& target_dsn) {
  pqxx::connection source(source_dsn);
  pqxx::connection target(target_dsn);
  try {
    pqxx::nontransaction source_tx(source);
    pqxx::work target_tx(target);
    pqxx::stream_from from(source_tx, kWindow);
    pqxx::stream_to to(target_tx, "raw.orders");
    to << from;
    to.complete();
    target_tx.commit();
    std::cout << "  stream_to << stream_from: succeeded\n";
  } catch (const std::exception& e) {
    std::cout << "  stream_to << stream_from: " << first_line(e.what()) << "\n";
  }
}

// A partition query with $1 and $2: libpq binds them with the partition
// column's type (timestamptz here) and reads the rows one at a time;
// libpqxx 6.4 binds them without a type and returns the whole result.
void partition_libpq(const std::string& dsn, const std::string& query, const char* lo, const char* hi) {
  PGconn* conn = PQconnectdb(dsn.c_str());
  const Oid types[] = {1184, 1184};
  const char* values[] = {lo, hi};
  const double start = seconds();
  PQsendQueryParams(conn, query.c_str(), 2, types, values, nullptr, nullptr, 0);
  PQsetSingleRowMode(conn);
  long rows = 0;
  std::string error;
  while (PGresult* r = PQgetResult(conn)) {
    if (PQresultStatus(r) == PGRES_SINGLE_TUPLE) ++rows;
    if (PQresultStatus(r) == PGRES_FATAL_ERROR) error = first_line(PQresultErrorMessage(r));
    PQclear(r);
  }
  if (error.empty()) {
    std::cout << "  libpq, typed, single-row mode: " << rows << " rows, " << seconds() - start
              << " s, max RSS " << max_rss_mib() << " MiB\n";
  } else {
    std::cout << "  libpq, typed, single-row mode: " << error << "\n";
  }
  PQfinish(conn);
}

void partition_libpqxx(const std::string& dsn, const std::string& query, const std::string& lo,
                       const std::string& hi) {
  pqxx::connection conn(dsn);
  const double start = seconds();
  try {
    pqxx::nontransaction tx(conn);
    const pqxx::result r = tx.exec_params(query, lo, hi);
    std::cout << "  libpqxx exec_params: " << r.size() << " rows, " << seconds() - start << " s, max RSS "
              << max_rss_mib() << " MiB\n";
  } catch (const pqxx::sql_error& e) {
    std::cout << "  libpqxx exec_params: " << e.sqlstate() << " " << first_line(e.what()) << "\n";
  }
}

// What a failed statement tells the caller.
void error_fields(const std::string& dsn) {
  pqxx::connection conn(dsn);
  pqxx::nontransaction tx(conn);
  tx.exec("drop table if exists probe_errors; create table probe_errors (id int primary key, v text)");
  tx.exec("insert into probe_errors values (1, 'a customer''s secret')");
  for (const char* sql : {"insert into probe_errors values (1, 'a customer''s secret')",
                          "select id, nosuchcolumn from probe_errors"}) {
    try {
      tx.exec(sql);
    } catch (const pqxx::sql_error& e) {
      std::string what = e.what();
      for (std::size_t at = 0; (at = what.find('\n', at)) != std::string::npos;) what.replace(at, 1, " | ");
      std::cout << "  sqlstate " << e.sqlstate() << ", what(): " << what << "\n";
    }
  }
}

// Cancels a COPY TO STDOUT from the thread that reads it.
void cancel_copy(const std::string& dsn) {
  pqxx::connection conn(dsn);
  conn.inhibit_reactivation(true);
  pqxx::nontransaction tx(conn);
  long rows = 0;
  try {
    pqxx::stream_from from(tx, kWindow);
    std::string line;
    while (from.get_raw_line(line)) {
      if (++rows == 1000) conn.cancel_query();
    }
    from.complete();
    std::cout << "  the COPY ended after " << rows << " rows without an error\n";
  } catch (const std::exception& e) {
    std::cout << "  cancelled after " << rows << " rows: " << first_line(e.what()) << "\n";
  }
  try {
    std::cout << "  the next statement: select 1 = " << tx.exec("select 1")[0][0].c_str() << "\n";
  } catch (const std::exception& e) {
    std::cout << "  the next statement: " << first_line(e.what()) << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: libpqxx_probe <experiment> <dsn> [args]\n";
    return 2;
  }
  const std::string experiment = argv[1];
  const std::string dsn = argv[2];
  if (experiment == "after-kill") after_kill(dsn, false);
  if (experiment == "after-kill-inhibited") after_kill(dsn, true);
  if (experiment == "killed-in-transaction") killed_in_transaction(dsn, false);
  if (experiment == "killed-in-transaction-inhibited") killed_in_transaction(dsn, true);
  if (experiment == "copy-libpq") copy_libpq(dsn, argv[3]);
  if (experiment == "copy-libpqxx") copy_libpqxx(dsn, argv[3]);
  if (experiment == "copy-libpqxx-stream") copy_libpqxx_stream(dsn, argv[3]);
  if (experiment == "partition-libpq") partition_libpq(dsn, argv[3], argv[4], argv[5]);
  if (experiment == "partition-libpqxx") partition_libpqxx(dsn, argv[3], argv[4], argv[5]);
  if (experiment == "errors") error_fields(dsn);
  if (experiment == "cancel") cancel_copy(dsn);
  return 0;
}
