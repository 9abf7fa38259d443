#include "daemon/pg/state/progress_book.h"

#include <nlohmann/json.hpp>

#include "daemon/pg/libpq/json_parameter.h"
#include "daemon/pg/libpq/pg_error.h"
#include "daemon/pg/state/table_keys_json.h"

namespace tidemark {

bool ProgressBook::has_table() {
  if (!has_table_) {
    has_table_ = connection_.exec("select to_regclass('tidemark.run_progress') is not null").boolean(0, 0);
  }
  return has_table_;
}

bool ProgressBook::has_ranges() {
  if (!has_ranges_) {
    has_ranges_ = connection_.exec("select to_regclass('tidemark.load_ranges') is not null").boolean(0, 0);
  }
  return has_ranges_;
}

Status ProgressBook::write(const std::vector<CopyProgress>& progress) {
  const Status written = as_result([&] {
    if (progress.empty() || !has_table()) return ok_status();
    nlohmann::json rows = nlohmann::json::array();
    for (const CopyProgress& p : progress) rows.push_back({p.table.pipeline, p.table.table, p.rows, p.bytes});
    connection_.exec(R"SQL(
insert into tidemark.run_progress (pipeline, table_name, rows, bytes, updated_at)
select r ->> 0, r ->> 1, (r ->> 2)::bigint, (r ->> 3)::bigint, now() from jsonb_array_elements($1::jsonb) r
on conflict (pipeline, table_name) do update
set rows = excluded.rows, bytes = excluded.bytes, updated_at = excluded.updated_at
)SQL",
                     {json_parameter(rows)});
    return ok_status();
  });
  if (!written) connection_.rollback_quietly();
  return written;
}

Result<std::map<TableKey, CopyProgress>> ProgressBook::read(const std::vector<TableKey>& tables) {
  return as_result([&] {
    std::map<TableKey, CopyProgress> out;
    if (tables.empty() || !has_table()) return out;
    const PgResult r = connection_.exec(R"SQL(
select p.pipeline, p.table_name, p.rows, p.bytes, extract(epoch from p.updated_at)::float8
from jsonb_array_elements($1::jsonb) a
join tidemark.run_progress p on p.pipeline = a ->> 0 and p.table_name = a ->> 1
)SQL",
                                        {json_parameter(table_keys_json(tables))});
    for (int i = 0; i < r.rows(); ++i) {
      CopyProgress p{TableKey{r.text(i, 0), r.text(i, 1)}, r.integer(i, 2), r.integer(i, 3), std::stod(r.text(i, 4))};
      out[p.table] = p;
    }
    return out;
  });
}

Result<std::map<TableKey, RangesDone>> ProgressBook::ranges(const std::vector<TableKey>& tables) {
  return as_result([&] {
    std::map<TableKey, RangesDone> out;
    if (tables.empty() || !has_ranges()) return out;
    const PgResult r = connection_.exec(R"SQL(
select l.pipeline, l.table_name, count(l.done_by), count(*)
from jsonb_array_elements($1::jsonb) a
join tidemark.load_ranges l on l.pipeline = a ->> 0 and l.table_name = a ->> 1
group by 1, 2
)SQL",
                                        {json_parameter(table_keys_json(tables))});
    for (int i = 0; i < r.rows(); ++i) out[TableKey{r.text(i, 0), r.text(i, 1)}] = RangesDone{r.integer(i, 2), r.integer(i, 3)};
    return out;
  });
}

}  // namespace tidemark
