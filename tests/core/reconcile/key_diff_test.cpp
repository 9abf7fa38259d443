// The merge of one batch of keys into reconcile's decisions, as a table of
// cases: each row is a source and a target key list and what must come out.
#include <doctest/doctest.h>

#include "core/reconcile/key_diff.h"

namespace tidemark {
namespace {

// "k" a key in bucket 0; a trailing "*" sets the flag (source: below the
// watermark; target: marked); a "=h" before it, the row's hash h.
std::vector<KeyRow> keys(std::initializer_list<const char*> texts) {
  std::vector<KeyRow> out;
  for (std::string t : texts) {
    KeyRow row;
    if (const auto eq = t.find('='); eq != std::string::npos) {
      row.hash = std::stoll(t.substr(eq + 1));
      t.erase(eq, t.find('*', eq) == std::string::npos ? std::string::npos : t.find('*', eq) - eq);
    }
    row.flag = !t.empty() && t.back() == '*';
    if (row.flag) t.pop_back();
    row.bucket = t.rfind("b1:", 0) == 0 ? 1 : 0;
    row.text = t;
    out.push_back(row);
  }
  return out;
}

std::vector<std::string> texts(const std::vector<KeyRow>& rows) {
  std::vector<std::string> out;
  for (const KeyRow& r : rows) out.push_back(r.text);
  return out;
}

struct Case {
  const char* name;
  std::vector<KeyRow> source;
  std::vector<KeyRow> target;
  std::vector<std::string> gone;
  std::vector<std::string> missing;
  std::vector<std::string> restored;
  std::vector<std::string> changed = {};
};

}  // namespace

TEST_CASE("key diff: deleted, missing, not loaded yet, marked and restored") {
  const Case cases[] = {
      {"equal sets", keys({"(1)*", "(2)*"}), keys({"(1)", "(2)"}), {}, {}, {}},
      {"target only: gone", keys({"(1)*"}), keys({"(1)", "(2)", "(3)"}), {"(2)", "(3)"}, {}, {}},
      {"source only below the watermark: missing", keys({"(1)*", "(2)*"}), keys({"(1)"}), {}, {"(2)"}, {}},
      {"source only at or above the watermark: not loaded yet", keys({"(1)*", "(2)"}), keys({"(1)"}), {}, {}, {}},
      {"a row whose cursor moved above the watermark is still in the source", keys({"(1)"}), keys({"(1)"}), {}, {},
       {}},
      {"marked and gone: deleted already", keys({}), keys({"(1)*"}), {}, {}, {}},
      {"marked, back below the watermark: restored", keys({"(1)*"}), keys({"(1)*"}), {}, {}, {"(1)"}},
      {"marked, back above the watermark: the next load unmarks it", keys({"(1)"}), keys({"(1)*"}), {}, {}, {}},
      {"byte order, not a collation's", keys({"(B)*", "(a)*"}), keys({"(B)", "(b)"}), {"(b)"}, {"(a)"}, {}},
      {"bucket before text", keys({"(z)*", "b1:(a)*"}), keys({"b1:(a)", "b1:(c)"}), {"b1:(c)"}, {"(z)"}, {}},
      {"both empty", keys({}), keys({}), {}, {}, {}},
      {"another hash below the watermark: changed", keys({"(1)=5*", "(2)=6*"}), keys({"(1)=5", "(2)=7"}), {}, {}, {},
       {"(2)"}},
      {"another hash above the watermark: the next load's", keys({"(1)=5"}), keys({"(1)=7"}), {}, {}, {}, {}},
      {"another hash on a marked row: restored, not changed", keys({"(1)=5*"}), keys({"(1)=7*"}), {}, {}, {"(1)"},
       {}},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.name));
    const KeyDiff d = diff_keys(c.source, c.target);
    CHECK(texts(d.gone) == c.gone);
    CHECK(texts(d.missing) == c.missing);
    CHECK(texts(d.restored) == c.restored);
    CHECK(texts(d.changed) == c.changed);
  }
}

}  // namespace tidemark
