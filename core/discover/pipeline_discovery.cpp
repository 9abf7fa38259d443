#include "core/discover/pipeline_discovery.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "core/text/plain_text.h"
#include "core/watermark/cursor_value.h"

namespace tidemark {
namespace {

// The reconcile discover gives every cursor table: at night, when most
// sources are quiet.
constexpr const char* kDailyReconcile = "0 3 * * *";

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// A YAML scalar that reads back as `text`: plain when it is a simple
// word, single-quoted otherwise (names with quotes, spaces, colons).
std::string yaml_scalar(const std::string& text) {
  static const std::regex plain(R"([A-Za-z_][A-Za-z0-9_.$-]*)");
  static const std::set<std::string> special = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
  if (std::regex_match(text, plain) && special.count(ascii_lower(text)) == 0) return text;
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string yaml_columns(const std::vector<std::string>& columns) {
  std::vector<std::string> shown;
  for (const std::string& c : columns) shown.push_back(yaml_scalar(display_identifier(c)));
  return "[" + join(shown) + "]";
}

// The key: the primary key, else the narrowest usable unique index whose
// columns are all NOT NULL (a NULL would let a key repeat).
std::optional<std::pair<std::vector<std::string>, std::string>> choose_key(const CatalogTable& table,
                                                                           std::string& why_not) {
  const auto not_null = [&](const std::string& column) {
    for (const CatalogColumn& c : table.columns) {
      if (c.name == column) return c.not_null;
    }
    return false;
  };
  for (const UniqueIndex& i : table.unique_indexes) {
    if (i.primary && i.identifies_rows()) return std::make_pair(i.columns, "primary key " + display_identifier(i.name));
  }
  const UniqueIndex* best = nullptr;
  std::vector<std::string> nullable;
  for (const UniqueIndex& i : table.unique_indexes) {
    if (!i.identifies_rows() || i.primary) continue;
    if (!std::all_of(i.columns.begin(), i.columns.end(), not_null)) {
      nullable.push_back(display_identifier(i.name));
      continue;
    }
    if (best == nullptr || i.columns.size() < best->columns.size() ||
        (i.columns.size() == best->columns.size() && i.name < best->name)) {
      best = &i;
    }
  }
  if (best != nullptr) {
    return std::make_pair(best->columns,
                          "unique index " + display_identifier(best->name) + " on NOT NULL columns (no primary key)");
  }
  why_not = "no primary key and no unique index on NOT NULL columns, so nothing tells its rows apart";
  if (!nullable.empty()) {
    why_not += " (unique index " + join(nullable) + " allows NULL, which may repeat)";
  }
  return std::nullopt;
}

// An integer the database numbers on INSERT: an identity or a sequence
// default.
bool is_sequenced(const CatalogColumn& c) {
  return is_integer_type(c.type) && (c.fill == ColumnFill::IdentityAlways || c.fill == ColumnFill::IdentityByDefault ||
                                c.default_expression.find("nextval(") != std::string::npos);
}

std::string sequence_origin(const CatalogColumn& c) {
  return c.fill == ColumnFill::None ? "a sequence (" + c.default_expression + ")" : std::string("an identity");
}

// Higher is a finer clock: timestamptz, then timestamp, then date; 0 for
// a column that is not a time.
int time_rank(const std::string& type) {
  const auto cursor = cursor_type_from_postgres(type);
  if (!cursor) return 0;
  switch (*cursor) {
    case CursorType::TimestampTz: return 3;
    case CursorType::Timestamp: return 2;
    case CursorType::Date: return 1;
    case CursorType::Integer: return 0;
  }
  return 0;
}

bool looks_like_change_stamp(const std::string& column) {
  static const std::regex stamp(R"((updated|modified|changed|last_update|last_modified|mtime))", std::regex::icase);
  return std::regex_search(column, stamp);
}

// `text` made a name: letters, digits, _ . - (others become _), starting
// with a letter or _, at most 63 characters.
std::string as_name(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x80 && (std::isalnum(u) || c == '_' || c == '.' || c == '-') ? c : '_';
  }
  if (out.empty() || (!std::isalpha(static_cast<unsigned char>(out[0])) && out[0] != '_')) out = "_" + out;
  return out.substr(0, 63);
}

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

bool has_control_character(const std::string& text) { return std::any_of(text.begin(), text.end(), is_control); }

// `text` as YAML comment lines of at most 100 characters, each starting
// with `prefix` ("  # "), later ones indented by two more.
std::string comment(const std::string& prefix, const std::string& text) {
  constexpr std::size_t kWidth = 100;
  std::string out;
  std::string line = prefix;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(at, end - at);
    std::replace_if(word.begin(), word.end(), is_control, '?');
    const bool fresh = line.size() == prefix.size() || line.size() == prefix.size() + 2;
    if (!fresh && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = prefix + "  ";
    }
    line += (line.size() == prefix.size() || line.size() == prefix.size() + 2 ? "" : " ") + word;
    at = end + 1;
  }
  return out + line + "\n";
}

struct Stamp {
  std::vector<std::string> on_update;  // trigger names
  std::vector<std::string> on_insert;
};

}  // namespace

bool reads_the_clock(const std::string& expression) {
  static const std::regex clock(
      R"(\b(now\s*\(|current_timestamp\b|clock_timestamp\s*\(|statement_timestamp\s*\(|transaction_timestamp\s*\(|localtimestamp\b|current_date\b))",
      std::regex::icase);
  return std::regex_search(expression, clock);
}

namespace {

// Whether a function body (`source`, lower case) assigns the clock to
// NEW.<column> in a statement of its own: `NEW.col := now()` or
// `NEW.col = now()` after BEGIN, THEN, ELSE, LOOP, a semicolon or at the
// start, so that `IF NEW.col = OLD.col` is not taken for one. Scanned by
// hand: a body can be long, and a backtracking regex over it is not safe.
bool assigns_the_clock(const std::string& source, const std::string& column) {
  const bool bare = display_identifier(column) == column;
  const std::string quoted = ascii_lower(quote_identifier(column));
  const auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; };
  const auto skip_blanks = [&](std::size_t at) {
    while (at < source.size() && std::isspace(static_cast<unsigned char>(source[at]))) ++at;
    return at;
  };
  for (std::size_t at = source.find("new"); at != std::string::npos; at = source.find("new", at + 1)) {
    if (at > 0 && is_word(source[at - 1])) continue;
    // What comes before: a statement's start.
    std::size_t before = at;
    while (before > 0 && std::isspace(static_cast<unsigned char>(source[before - 1]))) --before;
    bool starts = before == 0 || source[before - 1] == ';';
    for (const char* word : {"begin", "then", "else", "loop"}) {
      const std::size_t n = std::char_traits<char>::length(word);
      starts = starts || (before >= n && source.compare(before - n, n, word) == 0 &&
                          (before == n || !is_word(source[before - n - 1])));
    }
    if (!starts) continue;
    std::size_t p = skip_blanks(at + 3);
    if (p >= source.size() || source[p] != '.') continue;
    p = skip_blanks(p + 1);
    if (bare && source.compare(p, column.size(), column) == 0 &&
        (p + column.size() == source.size() || !is_word(source[p + column.size()]))) {
      p += column.size();
    } else if (source.compare(p, quoted.size(), quoted) == 0) {
      p += quoted.size();
    } else {
      continue;
    }
    p = skip_blanks(p);
    if (source.compare(p, 2, ":=") == 0) {
      p += 2;
    } else if (p < source.size() && source[p] == '=' && (p + 1 == source.size() || source[p + 1] != '=')) {
      p += 1;
    } else {
      continue;
    }
    const std::size_t end = source.find(';', p);
    const std::string value = source.substr(p, std::min<std::size_t>(end == std::string::npos ? source.size() - p : end - p, 200));
    if (reads_the_clock(value)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> columns_stamped_by(const CatalogTrigger& trigger, const CatalogTable& table) {
  std::vector<std::string> out;
  if (!trigger.before || !trigger.for_each_row) return out;
  const std::string language = ascii_lower(trigger.language);
  if (language == "c" && trigger.source == "moddatetime" && trigger.arguments.size() == 1) {
    out.push_back(trigger.arguments[0]);
    return out;
  }
  if (language != "plpgsql" && language != "sql") return out;
  const std::string source = ascii_lower(trigger.source);
  for (const CatalogColumn& c : table.columns) {
    if (assigns_the_clock(source, c.name)) out.push_back(c.name);
  }
  return out;
}

namespace {

// What stamps each column of `table` with the clock, by trigger; in the
// columns' order.
std::vector<Stamp> stamps_of(const CatalogTable& table) {
  std::vector<Stamp> stamps(table.columns.size());
  for (const CatalogTrigger& t : table.triggers) {
    for (const std::string& column : columns_stamped_by(t, table)) {
      for (std::size_t i = 0; i < table.columns.size(); ++i) {
        if (table.columns[i].name != column) continue;
        if (t.on_update) stamps[i].on_update.push_back(display_identifier(t.name));
        if (t.on_insert) stamps[i].on_insert.push_back(display_identifier(t.name));
      }
    }
  }
  return stamps;
}

// Whether a BEFORE UPDATE row trigger's function has a source discover
// cannot read for assignments (C other than moddatetime, internal,
// another language): it may stamp any column.
bool has_unread_update_trigger(const CatalogTable& table) {
  return std::any_of(table.triggers.begin(), table.triggers.end(), [](const CatalogTrigger& t) {
    const std::string language = ascii_lower(t.language);
    const bool read = language == "plpgsql" || language == "sql" || (language == "c" && t.source == "moddatetime");
    return t.before && t.for_each_row && t.on_update && !read;
  });
}

struct InsertCursor {
  const CatalogColumn* column = nullptr;
  std::string evidence;  // what numbers or stamps it on INSERT, and why nothing else moves it
  std::vector<std::string> risks;
};

// The cursor of a table without a key, for mode: append: a column only
// INSERT sets. An identity or a sequence's id first: the database hands
// it out, and no one's clock decides it (an identity ALWAYS refuses an
// INSERT's own value outright). Only then a timestamp whose default reads
// the clock (or that a BEFORE INSERT trigger stamps) and that nothing
// stamps on UPDATE, since a column stamped on UPDATE moves when a row
// changes, and that row would be inserted a second time. Its risk is the
// application: an INSERT that gives it a value of its own (its host's
// clock, a backdated row) may land below the watermark, never loaded.
std::optional<InsertCursor> insert_only_cursor(const CatalogTable& table, const std::vector<Stamp>& stamps) {
  const auto usable = [](const CatalogColumn& c) {
    return c.fill != ColumnFill::Generated && !has_control_character(c.name);
  };
  const CatalogColumn* id = nullptr;
  const auto id_rank = [](const CatalogColumn& c) {
    return (c.fill == ColumnFill::IdentityAlways ? 4 : c.fill == ColumnFill::IdentityByDefault ? 2 : 0) +
           (c.not_null ? 1 : 0);
  };
  for (const CatalogColumn& c : table.columns) {
    if (is_sequenced(c) && usable(c) && (id == nullptr || id_rank(c) > id_rank(*id))) id = &c;
  }
  InsertCursor out;
  if (id != nullptr) {
    out.column = id;
    out.evidence = display_identifier(id->name) + " comes from " + sequence_origin(*id) + ", which numbers new rows";
    if (id->fill == ColumnFill::IdentityAlways) {
      out.evidence += " (GENERATED ALWAYS: an INSERT cannot give it a value of its own)";
    } else {
      out.risks.push_back("an INSERT that gives " + display_identifier(id->name) +
                          " a value of its own below the watermark is never loaded");
    }
    out.risks.push_back("no lookback: a run must see every open transaction of the source (pg_monitor for the "
                        "source's role), and the sequence must hand out ids with CACHE 1");
  } else {
    if (has_unread_update_trigger(table)) return std::nullopt;
    std::optional<std::size_t> best;
    const auto time_score = [&](std::size_t i) {
      return (table.columns[i].not_null ? 10 : 0) + time_rank(table.columns[i].type);
    };
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      const CatalogColumn& c = table.columns[i];
      const bool stamped_on_insert = reads_the_clock(c.default_expression) || !stamps[i].on_insert.empty();
      if (time_rank(c.type) < 2 || !usable(c) || !stamped_on_insert || !stamps[i].on_update.empty()) continue;
      if (!best || time_score(i) > time_score(*best)) best = i;
    }
    if (!best) return std::nullopt;
    const CatalogColumn& c = table.columns[*best];
    out.column = &c;
    out.evidence = display_identifier(c.name) + " is stamped on INSERT by " +
                   (stamps[*best].on_insert.empty() ? "its default " + c.default_expression
                                                    : "trigger " + join(stamps[*best].on_insert)) +
                   ", and no trigger stamps it on UPDATE";
    out.risks.push_back("an INSERT that gives " + display_identifier(c.name) +
                        " a value of its own (an application's clock, a backdated row) below the watermark is never "
                        "loaded");
    out.risks.push_back("no lookback: a run must see every open transaction of the source (pg_monitor for the "
                        "source's role)");
  }
  if (!out.column->not_null) {
    out.risks.push_back(display_identifier(out.column->name) +
                        " allows NULL: a row inserted with NULL in it is never loaded");
  }
  return out;
}

// A table without a key: mode: append on an insert-only cursor where the
// target holds the state, else a snapshot without key up to the limit,
// else left out. `out` has its names; `no_key` says why it has no key.
DiscoveredTable discover_keyless(DiscoveredTable out, const CatalogTable& table, const std::string& no_key,
                                 const DiscoverPolicy& policy) {
  out.key_reason = no_key;
  const std::vector<Stamp> stamps = stamps_of(table);
  // A change stamp is a cursor only with a key to find the row it changed.
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (stamps[i].on_update.empty()) continue;
    notes.push_back(display_identifier(table.columns[i].name) + " is stamped on every UPDATE by trigger " +
                    join(stamps[i].on_update) + ": with a key it would be the cursor of an incremental table");
  }
  const std::optional<InsertCursor> cursor = insert_only_cursor(table, stamps);
  const bool state_in_target = policy.target == policy.state;
  if (cursor && state_in_target) {
    out.mode = DiscoveredMode::Append;
    out.cursor = cursor->column->name;
    out.insert_only = true;
    out.reason = cursor->evidence + "; each run inserts the rows past the watermark once, in the transaction that "
                 "moves it";
    out.notes.push_back("updates and deletes of its rows are not loaded: the runs count them as unseen changes "
                        "(tidemark_unseen_changes); if rows change, drop cursor and make it mode: snapshot");
    out.notes.push_back("it needs the state in the target's database (state: " +
                        (policy.state.empty() ? std::string("the target connection") : policy.state) + ")");
    out.notes.insert(out.notes.end(), cursor->risks.begin(), cursor->risks.end());
    out.notes.insert(out.notes.end(), notes.begin(), notes.end());
    return out;
  }
  std::string no_append;
  if (cursor) {
    no_append = cursor->evidence + ", but mode: append commits its rows and its watermark in one transaction, which "
                "needs the state in the target's database: this pipeline writes to connection " + policy.target +
                " and the state lives in " + policy.state;
  } else {
    no_append = "no insert-only cursor for mode: append (an identity, a sequence default, or a timestamp its default "
                "stamps and no trigger stamps on UPDATE)";
  }
  if (table.estimated_rows <= policy.snapshot_limit) {
    out.mode = DiscoveredMode::Snapshot;
    out.reason = no_append + "; so each run makes the target equal to the source as a multiset, comparing both "
                 "sides' row hashes and copying what differs; no key: identical rows are counted, and a changed row "
                 "is deleted and inserted again";
    out.notes = notes;
    return out;
  }
  out.mode = DiscoveredMode::LeftOut;
  out.reason = no_key + "; about " + std::to_string(table.estimated_rows) + " rows, above --snapshot-limit (" +
               std::to_string(policy.snapshot_limit) +
               "), where a snapshot without key would compare the whole table every run; and " + no_append +
               (table.partitioned ? "; add a primary key (on a partitioned table it holds the partition columns) or "
                                    "an identity column to load it"
                                  : "; add a primary key or an identity column to load it");
  if (cursor) out.reason += ", or set state: " + policy.target + " to load it as mode: append";
  return out;
}

}  // namespace

DiscoveredTable discover_table(const CatalogTable& table, const DiscoverPolicy& policy) {
  DiscoveredTable out;
  out.source = table.name;
  out.name = table.name.name();
  // The configuration refuses control characters anywhere in a file.
  if (has_control_character(table.name.name()) || has_control_character(table.name.schema().value_or(""))) {
    out.reason = "its name holds a control character, which a pipeline file cannot: rename it to load it";
    return out;
  }
  std::string why_not;
  const auto key = choose_key(table, why_not);
  if (!key) return discover_keyless(std::move(out), table, why_not, policy);
  out.key = key->first;
  out.key_reason = key->second;
  if (std::any_of(out.key.begin(), out.key.end(), has_control_character)) {
    out.reason = "a key column's name holds a control character, which a pipeline file cannot: rename it to load it";
    out.key.clear();
    return out;
  }

  const std::vector<Stamp> stamps = stamps_of(table);

  // A time column a trigger stamps on every UPDATE: best when something
  // also stamps it on INSERT, then the finer clock, then the name.
  int best = -1;
  auto score = [&](std::size_t i) {
    const CatalogColumn& c = table.columns[i];
    const bool on_insert = !stamps[i].on_insert.empty() || reads_the_clock(c.default_expression);
    return (on_insert ? 10 : 0) + time_rank(c.type);
  };
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const CatalogColumn& c = table.columns[i];
    if (time_rank(c.type) == 0 || stamps[i].on_update.empty() || c.fill == ColumnFill::Generated ||
        has_control_character(c.name)) {
      continue;
    }
    if (best < 0 || score(i) > score(static_cast<std::size_t>(best))) best = static_cast<int>(i);
  }
  if (best >= 0) {
    const CatalogColumn& c = table.columns[static_cast<std::size_t>(best)];
    const Stamp& s = stamps[static_cast<std::size_t>(best)];
    out.mode = DiscoveredMode::Incremental;
    out.cursor = c.name;
    out.reason = display_identifier(c.name) + " is stamped on every UPDATE by trigger " + join(s.on_update);
    if (!s.on_insert.empty()) {
      out.reason += ", on INSERT by trigger " + join(s.on_insert);
    } else if (reads_the_clock(c.default_expression)) {
      out.reason += ", on INSERT by its default " + c.default_expression;
    } else {
      out.notes.push_back("nothing stamps " + display_identifier(c.name) +
                          " on INSERT: rows inserted with an old or NULL value are never loaded; give it a default "
                          "such as now()");
    }
    if (time_rank(c.type) == 1) {
      out.notes.push_back(display_identifier(c.name) +
                          " is a date: every run re-reads today's rows, since a date cannot say which came later");
    }
    // A cursor sees what is written, never what is deleted.
    out.reconcile = kDailyReconcile;
    out.notes.push_back("a cursor cannot see a deleted row: the daily reconcile removes the rows deleted from the "
                        "source (drop deletes: if rows are never deleted)");
    return out;
  }

  // No column the database stamps on every change: a snapshot is exact
  // and costs what changed. Above the snapshot limit, the best cursor the
  // table has instead, with a daily reconcile: a change column the
  // application sets (it sees updates when every writer stamps it), else
  // an increasing id (new rows only).
  const CatalogColumn* stamped_by_application = nullptr;
  for (const CatalogColumn& c : table.columns) {
    if (time_rank(c.type) > 0 && looks_like_change_stamp(c.name) && c.fill != ColumnFill::Generated &&
        !has_control_character(c.name) && stamped_by_application == nullptr) {
      stamped_by_application = &c;
    }
  }
  const CatalogColumn* increasing = nullptr;
  for (const CatalogColumn& c : table.columns) {
    if (!is_sequenced(c) || has_control_character(c.name)) continue;
    // A key column first: it never changes once inserted.
    if (increasing == nullptr || (contains(out.key, c.name) && !contains(out.key, increasing->name))) increasing = &c;
  }
  const std::string rows = "about " + std::to_string(table.estimated_rows) + " rows";
  const CatalogColumn* cursor = stamped_by_application ? stamped_by_application : increasing;
  if (table.estimated_rows <= policy.snapshot_limit || cursor == nullptr) {
    out.mode = DiscoveredMode::Snapshot;
    out.reason = "no trigger stamps a column on UPDATE, so only a snapshot is exact: each run compares both sides' "
                 "row hashes and copies only the rows that changed";
    if (stamped_by_application) {
      out.notes.push_back("cheaper for a large table, and exact only if every writer sets it on every change: cursor: " +
                          yaml_scalar(display_identifier(stamped_by_application->name)) +
                          " with a lookback and a daily deletes.reconcile (and drop mode: snapshot)");
    }
    if (increasing) {
      out.notes.push_back(display_identifier(increasing->name) + " comes from " + sequence_origin(*increasing) +
                          ": as a cursor it sees new rows only; use it only for a table that is never updated or "
                          "deleted from");
    }
    if (table.estimated_rows > policy.snapshot_limit) {
      out.notes.push_back(rows + ", above --snapshot-limit, but no column could serve as a cursor");
    }
    return out;
  }
  out.mode = DiscoveredMode::Incremental;
  out.cursor = cursor->name;
  out.reconcile = kDailyReconcile;
  const std::string why = rows + ", above --snapshot-limit (" + std::to_string(policy.snapshot_limit) +
                          "), so a cursor instead of a snapshot, with a daily reconcile that deletes rows gone from "
                          "the source and copies again rows missing or changed below the watermark";
  if (stamped_by_application) {
    out.lookback = "1h";
    out.reason = display_identifier(cursor->name) +
                 " looks like a change stamp the application sets (nothing in the catalog does); " + why +
                 "; a row changed without it being stamped stays stale until that reconcile: use mode: snapshot "
                 "to be exact at every run";
  } else {
    out.insert_only = true;
    out.reason = display_identifier(cursor->name) + " comes from " + sequence_origin(*cursor) + "; " + why +
                 "; INSERT ONLY: changes to existing rows are not seen until that reconcile (use mode: snapshot "
                 "if rows change)";
  }
  return out;
}

std::string pipeline_name(const std::string& source, const std::string& schema) {
  return as_name(source + "_" + schema);
}

std::string render_pipeline(const PipelineRequest& request, std::vector<DiscoveredTable> tables) {
  std::sort(tables.begin(), tables.end(),
            [](const DiscoveredTable& a, const DiscoveredTable& b) { return a.name < b.name; });
  // Names in a pipeline are unique and made of name characters.
  std::set<std::string> used;
  for (DiscoveredTable& t : tables) {
    if (t.mode == DiscoveredMode::LeftOut) continue;
    const std::string base = as_name(t.name).substr(0, 56);  // room for a suffix
    std::string name = base;
    for (int n = 2; !used.insert(name).second; ++n) name = base + "_" + std::to_string(n);
    t.name = name;
  }
  const DiscoveryCounts counts = count_discovered(tables);
  std::string out;
  out += comment("# ", "Written by tidemark discover from connection " + request.source + ", schema " +
                           display_identifier(request.source_schema) + ": " + std::to_string(counts.found) +
                           " tables, " + std::to_string(counts.incremental) + " incremental, " +
                           std::to_string(counts.append) + " append, " + std::to_string(counts.snapshot) +
                           " snapshot, " + std::to_string(counts.left_out) +
                           " left out. Read each table's comment before serving it; tidemark validate checks the "
                           "result.");
  out += "pipeline: " + yaml_scalar(request.pipeline) + "\n";
  out += "source: " + yaml_scalar(request.source) + "\n";
  out += "target: " + yaml_scalar(request.target) + "\n";
  out += "schedule: \"" + request.schedule + "\"\n";
  out += comment("# ", "A missing target table is created by its first run: the source's columns and types, NOT "
                       "NULL, a primary key on key (none for a table without key); nothing else.");
  out += "create_target: true\n";
  if (counts.loadable() > 0) out += "tables:\n";
  bool first = true;
  for (const DiscoveredTable& t : tables) {
    if (t.mode == DiscoveredMode::LeftOut) continue;
    if (!first) out += "\n";
    first = false;
    out += comment("  # ", t.source.display() + ": " + (t.key.empty() ? "" : "key from its ") + t.key_reason + ".");
    const char* choice = t.mode == DiscoveredMode::Snapshot ? "mode: snapshot: "
                         : t.mode == DiscoveredMode::Append ? "mode: append: "
                                                            : "cursor: ";
    out += comment("  # ", choice + t.reason + ".");
    for (const std::string& note : t.notes) out += comment("  # ", "Note: " + note + ".");
    out += "  - name: " + yaml_scalar(t.name) + "\n";
    if (t.mode == DiscoveredMode::Snapshot) out += "    mode: snapshot\n";
    if (t.mode == DiscoveredMode::Append) out += "    mode: append\n";
    out += "    source_table: " + yaml_scalar(t.source.display()) + "\n";
    out += "    target_table: " +
           yaml_scalar(QualifiedName(request.target_schema, t.source.name()).display()) + "\n";
    if (!t.key.empty()) out += "    key: " + yaml_columns(t.key) + "\n";
    if (t.mode == DiscoveredMode::Incremental || t.mode == DiscoveredMode::Append) {
      out += "    cursor: " + yaml_scalar(display_identifier(t.cursor)) + "\n";
    }
    if (!t.lookback.empty()) out += "    lookback: " + t.lookback + "\n";
    if (!t.reconcile.empty()) out += "    deletes: { reconcile: \"" + t.reconcile + "\" }\n";
  }
  if (counts.left_out > 0) {
    out += "\n# Left out:\n";
    for (const DiscoveredTable& t : tables) {
      if (t.mode == DiscoveredMode::LeftOut) out += comment("#   ", t.source.display() + ": " + t.reason + ".");
    }
  }
  return out;
}

DiscoveryCounts& DiscoveryCounts::operator+=(const DiscoveryCounts& other) {
  found += other.found;
  incremental += other.incremental;
  insert_only += other.insert_only;
  append += other.append;
  snapshot += other.snapshot;
  left_out += other.left_out;
  return *this;
}

DiscoveryCounts count_discovered(const std::vector<DiscoveredTable>& tables) {
  DiscoveryCounts counts;
  for (const DiscoveredTable& t : tables) {
    ++counts.found;
    switch (t.mode) {
      case DiscoveredMode::Incremental:
        ++counts.incremental;
        counts.insert_only += t.insert_only ? 1 : 0;
        break;
      case DiscoveredMode::Append: ++counts.append; break;
      case DiscoveredMode::Snapshot: ++counts.snapshot; break;
      case DiscoveredMode::LeftOut: ++counts.left_out; break;
    }
  }
  return counts;
}

}  // namespace tidemark
