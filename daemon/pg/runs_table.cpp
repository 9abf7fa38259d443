#include "daemon/pg/runs_table.h"

#include <array>
#include <utility>

namespace tidemark {

std::string_view run_row_status_word(RunRowStatus status) {
  switch (status) {
    case RunRowStatus::Running: return "running";
    case RunRowStatus::Success: return "success";
    case RunRowStatus::Failed: return "failed";
  }
  return "failed";
}

std::string_view job_kind_word(JobKind kind) { return kind == JobKind::Reconcile ? "reconcile" : "load"; }

JobKind job_kind_named(std::string_view word) {
  return word == job_kind_word(JobKind::Reconcile) ? JobKind::Reconcile : JobKind::Load;
}

JobKind job_kind_of(RunTrigger trigger) {
  return trigger == RunTrigger::Reconcile ? JobKind::Reconcile : JobKind::Load;
}

std::string run_row_sql(std::string_view sql) {
  static const std::string word[] = {
      "'" + std::string(run_row_status_word(RunRowStatus::Running)) + "'",
      "'" + std::string(run_row_status_word(RunRowStatus::Success)) + "'",
      "'" + std::string(run_row_status_word(RunRowStatus::Failed)) + "'",
      "'" + std::string(job_kind_word(JobKind::Load)) + "'",
      "'" + std::string(job_kind_word(JobKind::Reconcile)) + "'",
      "'" + std::string(error_kind_name(ErrorKind::Transient)) + "'",
  };
  const std::array<std::pair<std::string_view, std::string_view>, 6> marks{{
      {"{running}", word[0]},
      {"{success}", word[1]},
      {"{failed}", word[2]},
      {"{load}", word[3]},
      {"{reconcile}", word[4]},
      {"{transient}", word[5]},
  }};
  std::string out;
  out.reserve(sql.size());
  std::size_t at = 0;
  while (at < sql.size()) {
    bool replaced = false;
    if (sql[at] == '{') {
      for (const auto& [mark, text] : marks) {
        if (sql.substr(at, mark.size()) != mark) continue;
        out.append(text);
        at += mark.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(sql[at++]);
  }
  return out;
}

}  // namespace tidemark
