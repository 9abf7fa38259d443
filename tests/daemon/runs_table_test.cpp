// The run row's words, and the statements spelled with them.
#include "daemon/pg/libpq/json_parameter.h"
#include "daemon/pg/state/runs_table.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tidemark {

TEST_CASE("a statement's word marks become the run row's words as literals, other braces stay") {
  CHECK(run_row_sql("where status = {success} and kind = {reconcile} and status <> {running}") ==
        "where status = 'success' and kind = 'reconcile' and status <> 'running'");
  CHECK(run_row_sql("set status = {failed}, error_kind = {transient}, kind = {load}") ==
        "set status = 'failed', error_kind = 'transient', kind = 'load'");
  CHECK(run_row_sql("select '{}'::jsonb, '{a,b}'::text[], {other}") == "select '{}'::jsonb, '{a,b}'::text[], {other}");
}

TEST_CASE("the run row's status words") {
  CHECK(run_row_status_word(RunRowStatus::Running) == "running");
  CHECK(run_row_status_word(RunRowStatus::Success) == "success");
  CHECK(run_row_status_word(RunRowStatus::Failed) == "failed");
}

}  // namespace tidemark

namespace tidemark {
namespace {

// The names in a jsonb_to_record column list, "a text, b bigint" -> {a, b}.
std::vector<std::string> column_names(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::size_t first = list.find_first_not_of(' ', at);
    out.push_back(list.substr(first, list.find(' ', first) - first));
    at = comma + 1;
  }
  return out;
}

std::vector<std::string> keys(const nlohmann::json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("a run's start and end as columns: each value has its column in the list a statement reads them with") {
  RunEnd end;
  end.success = false;
  end.error = "boom";
  end.error_kind = ErrorKind::Permanent;
  end.reconcile = ReconcileCounts{1, 2, 3};
  const nlohmann::json failed = run_end_columns(end);
  CHECK(failed["status"] == "failed");
  CHECK(failed["error"] == "boom");
  CHECK(failed["error_kind"] == "permanent");
  CHECK(failed["rows_missing"] == 2);
  CHECK(failed["unseen_changes"].is_null());
  RunEnd succeeded;
  succeeded.success = true;
  CHECK(run_end_columns(succeeded)["status"] == "success");
  CHECK(run_end_columns(succeeded)["error_kind"].is_null());

  for (const auto& [mark, columns] :
       {std::pair<const char*, nlohmann::json>{"{end_columns}", failed},
        {"{start_columns}", run_start_columns(RunStart{{"p", "t"}, RunTrigger::Reconcile, std::nullopt})}}) {
    std::vector<std::string> listed = column_names(run_row_sql(mark));
    std::sort(listed.begin(), listed.end());
    CHECK(listed == keys(columns));
  }
  CHECK(run_start_columns(RunStart{{"p", "t"}, RunTrigger::Reconcile, std::nullopt})["kind"] == "reconcile");
}

TEST_CASE("every statement that writes a run's end names the same columns, each written its own way") {
  const nlohmann::json end = run_end_columns(RunEnd{});
  const std::string names = run_row_sql("{end_names}");
  const std::string values = run_row_sql("{end_values}");
  const std::string assignments = run_row_sql("{end_assignments}");
  // "a, b": the names of "a text, b bigint".
  std::vector<std::string> listed = column_names(run_row_sql("{end_columns}"));
  std::sort(listed.begin(), listed.end());
  CHECK(listed == keys(end));
  std::string expected;
  for (const std::string& c : column_names(run_row_sql("{end_columns}"))) expected += (expected.empty() ? "" : ", ") + c;
  CHECK(names == expected);
  // An insert takes the end's values as they are, an empty holder as NULL.
  CHECK(values.find("e.window_lo") != std::string::npos);
  CHECK(values.find("nullif(e.horizon_held_by, '')") != std::string::npos);
  CHECK(values.find("coalesce") == std::string::npos);
  // An update keeps what the steps recorded where the end says nothing.
  CHECK(assignments.find("window_lo = coalesce(e.window_lo, r.window_lo)") != std::string::npos);
  CHECK(assignments.find("rows_deleted = coalesce(e.rows_deleted, r.rows_deleted)") != std::string::npos);
  CHECK(assignments.find("rows_read = e.rows_read") != std::string::npos);
  CHECK(assignments.find("horizon_held_by = nullif(e.horizon_held_by, '')") != std::string::npos);
  for (const std::string& key : keys(end)) {
    CHECK(names.find(key) != std::string::npos);
    CHECK(assignments.find(key + " = ") != std::string::npos);
  }
}

TEST_CASE("regression: a run's end whose error is not valid UTF-8 is bound, its bad bytes replaced, not thrown") {
  RunEnd end;
  end.error = std::string("relation \"caf\xC3") + "\" does not exist";  // a name cut inside a character
  std::string bound;
  CHECK_NOTHROW(bound = json_parameter(run_end_columns(end)));
  CHECK(bound.find("caf\xEF\xBF\xBD") != std::string::npos);  // U+FFFD
}

}  // namespace tidemark
