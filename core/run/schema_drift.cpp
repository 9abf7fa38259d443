#include "core/run/schema_drift.h"

#include <algorithm>

namespace tidemark {
namespace {

void add_part(std::string& text, const std::string& part) { text += (text.empty() ? "" : "; ") + part; }

}  // namespace

std::string SchemaDrift::describe() const {
  std::string text;
  for (const ColumnShape& c : added) add_part(text, "added column " + c.name + " " + c.type);
  for (const std::string& c : dropped) add_part(text, "dropped column " + c);
  for (const ColumnRetype& c : retyped) add_part(text, "retyped " + c.name + " " + c.from + " -> " + c.to);
  return text;
}

SchemaDecision decide_schema(const SchemaDriftInput& input) {
  SchemaDecision out;
  const bool listed = !input.configured.empty();
  const auto counts = [&](const std::string& name) {
    return !listed || std::find(input.configured.begin(), input.configured.end(), name) != input.configured.end();
  };

  // Added: only when every source column is loaded.
  if (!listed) {
    for (const ColumnShape& c : input.source) {
      const bool known = input.loaded && find_column(*input.loaded, c.name) != nullptr;
      if (known || find_column(input.target, c.name) != nullptr) continue;
      out.drift.added.push_back(c);
    }
  }
  if (input.loaded) {
    for (const ColumnShape& was : *input.loaded) {
      if (!counts(was.name)) continue;
      const ColumnShape* now = find_column(input.source, was.name);
      const ColumnShape* in_target = find_column(input.target, was.name);
      if (now == nullptr) {
        // Gone from the target as well: nothing is left to go stale.
        if (in_target != nullptr) out.drift.dropped.push_back(was.name);
        continue;
      }
      if (now->type != was.type && (in_target == nullptr || in_target->type != now->type)) {
        out.drift.retyped.push_back({was.name, was.type, now->type});
      }
    }
  }
  if (input.policy == SchemaChangePolicy::AppendNewColumns) {
    out.append = std::move(out.drift.added);
    out.drift.added.clear();
  } else if (!input.loaded && input.first_load) {
    out.drift.added.clear();  // said below as a column the target lacks
  }

  const auto generated = [&](const std::string& name) {
    const ColumnShape* c = find_column(input.target, name);
    return c != nullptr && c->fill == ColumnFill::Generated;
  };
  if (listed) {
    out.load = input.configured;
    for (const std::string& name : out.load) {
      if (!generated(name)) continue;
      out.failure = "target table " + input.target_name + " generates column " + name +
                    " itself (GENERATED ALWAYS AS ... STORED), so it cannot take the source's values: take " + name +
                    " out of columns: (a key column the target generates: make it a plain column there)";
      return out;
    }
  } else {
    for (const ColumnShape& c : input.source) {
      (generated(c.name) ? out.generated_by_target : out.load).push_back(c.name);
    }
  }

  if (!out.drift.empty()) {
    std::string message = "schema drift in " + input.source_name + ": " + out.drift.describe();
    if (input.policy == SchemaChangePolicy::AppendNewColumns) {
      message += " (on_schema_change: append_new_columns adds new columns only)";
    }
    out.failure = message;
    out.append.clear();  // the run stops: nothing is added either
    return out;
  }
  for (const std::string& name : out.load) {
    const ColumnShape* c = find_column(input.source, name);
    if (c == nullptr) {
      out.failure = "source table " + input.source_name + " has no column " + name;
      return out;
    }
    out.snapshot.push_back(*c);
  }
  for (const std::string& name : out.load) {
    if (find_column(input.target, name) == nullptr && find_column(out.append, name) == nullptr) {
      out.failure = "target table " + input.target_name + " has no column " + name;
      return out;
    }
  }
  out.snapshot_changed = !input.loaded || *input.loaded != out.snapshot;
  return out;
}

std::optional<std::string> changed_while_read(const std::string& source_name, const std::vector<std::string>& copied,
                                              const std::vector<ColumnShape>& inspected,
                                              const std::vector<ColumnShape>& read) {
  std::string changes;
  for (const std::string& name : copied) {
    const ColumnShape* before = find_column(inspected, name);
    const ColumnShape* during = find_column(read, name);
    const std::string was = before != nullptr ? before->type : std::string("missing");
    const std::string now = during != nullptr ? during->type : std::string("missing");
    if (was != now) add_part(changes, name + " " + was + " -> " + now);
  }
  if (changes.empty()) return std::nullopt;
  return "source table " + source_name + " changed while the chunk read it (" + changes +
         "); nothing committed, and the next run compares its columns again";
}

}  // namespace tidemark
