#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>

#include "core/discover/pipeline_discovery.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/pg/data/catalog_reader.h"
#include "daemon/pg/data/pipeline_connections.h"

namespace tidemark {
namespace {

struct SchemaFile {
  std::string name;  // the file's name: the pipeline's, .yaml
  std::string pipeline_schema;  // the source schema it loads
  std::string text;
  DiscoveryCounts counts;
};

// "2 append, " where tables without a key were found to append, else
// nothing: the counts read as before for schemas whose tables all have
// keys.
std::string appended(const DiscoveryCounts& counts) {
  return counts.append == 0 ? "" : fmt::format("{} append, ", counts.append);
}

// Two schemas whose file names fold alike, or (with --target-schema) two
// tables loading one target table, would overwrite each other: refused
// (kExitUsage, said on `err`), else kExitOk.
int refuse_clashes(const std::vector<SchemaFile>& files,
                   const std::map<std::string, std::vector<DiscoveredTable>>& by_schema,
                   const std::string& target_schema, std::ostream& err) {
  std::map<std::string, std::string> file_of;
  for (const SchemaFile& f : files) {
    if (!file_of.emplace(f.name, f.pipeline_schema).second) {
      err << "tidemark discover: schemas " << display_identifier(file_of[f.name]) << " and "
          << display_identifier(f.pipeline_schema) << " both make pipeline " << f.name
          << "; run discover once per schema (--schema)\n";
      return kExitUsage;
    }
  }
  std::map<std::string, std::string> loaded_by;
  for (const auto& [schema, tables] : by_schema) {
    for (const DiscoveredTable& t : tables) {
      if (t.mode == DiscoveredMode::LeftOut) continue;
      const std::string into = QualifiedName(target_schema.empty() ? schema : target_schema, t.source.name()).display();
      const auto [it, fresh] = loaded_by.emplace(into, t.source.display());
      if (!fresh) {
        err << "tidemark discover: " << it->second << " and " << t.source.display() << " would both load into "
            << into << "; run discover once per schema, each with a --target-schema of its own\n";
        return kExitUsage;
      }
    }
  }
  return kExitOk;
}

// Writes each file into --write's folder, each through a partial file
// renamed into place, and says what each holds on `out`. Nothing is
// written unless every file may be (one there already needs --force).
int write_files(const std::vector<SchemaFile>& files, const DiscoverOptions& command_line, std::ostream& out,
                std::ostream& err) {
  namespace fs = std::filesystem;
  const fs::path dir(command_line.write_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    err << "tidemark discover: --write " << command_line.write_dir << " is not a folder\n";
    return kExitUsage;
  }
  // Nothing is written unless every file may be.
  if (!command_line.force) {
    for (const SchemaFile& f : files) {
      if (fs::exists(dir / f.name, ec)) {
        err << "tidemark discover: " << (dir / f.name).string()
            << " exists; nothing was written (add --force to replace it)\n";
        return kExitUsage;
      }
    }
  }
  for (const SchemaFile& f : files) {
    const fs::path path = dir / f.name;
    const fs::path partial = dir / ("." + f.name + ".partial");
    {
      std::ofstream file(partial, std::ios::trunc);
      file << f.text;
      file.close();
      if (!file) {
        err << "tidemark discover: cannot write " << partial.string() << '\n';
        return kExitFailure;
      }
    }
    fs::rename(partial, path, ec);
    if (ec) {
      err << "tidemark discover: cannot write " << path.string() << ": " << ec.message() << '\n';
      return kExitFailure;
    }
    fmt::print(out, "wrote {}: {} incremental, {}{} snapshot, {} left out\n", path.string(), f.counts.incremental,
               appended(f.counts), f.counts.snapshot, f.counts.left_out);
  }
  return kExitOk;
}

}  // namespace

int run_discover(const ConfigPtr& config, const DiscoverOptions& command_line, std::ostream& out, std::ostream& err) {
  if (config->daemon.find_connection(command_line.source) == nullptr) {
    err << "tidemark discover: --source " << command_line.source << " names no connection of "
        << config->daemon.file << '\n';
    return kExitUsage;
  }
  const std::string target = command_line.target.empty() ? config->daemon.state : command_line.target;
  if (config->daemon.find_connection(target) == nullptr) {
    err << "tidemark discover: --target " << target << " names no connection of " << config->daemon.file << '\n';
    return kExitUsage;
  }
  std::vector<CatalogTable> catalog;
  try {
    // A read-only session: discover changes nothing in the source.
    const auto source = connect_to_source(*config, command_line.source);
    catalog = read_source_catalog(*source, command_line.schemas);
  } catch (const std::exception& e) {
    err << "tidemark discover: " << e.what() << '\n';
    return kExitFailure;
  }

  DiscoverPolicy policy;
  policy.snapshot_limit = command_line.snapshot_limit;
  policy.target = target;
  policy.state = config->daemon.state;
  std::map<std::string, std::vector<DiscoveredTable>> by_schema;
  for (const std::string& s : command_line.schemas) by_schema[s];
  for (const CatalogTable& t : catalog) by_schema[*t.name.schema()].push_back(discover_table(t, policy));

  std::vector<SchemaFile> files;
  DiscoveryCounts total;
  std::vector<std::string> unloadable;  // schemas without a table to load
  for (const auto& [schema, tables] : by_schema) {
    const DiscoveryCounts counts = count_discovered(tables);
    total += counts;
    if (counts.loadable() == 0) {
      unloadable.push_back(schema);
      for (const DiscoveredTable& t : tables) err << "left out " << t.source.display() << ": " << t.reason << '\n';
      continue;
    }
    PipelineRequest request;
    request.pipeline = pipeline_name(command_line.source, schema);
    request.source = command_line.source;
    request.target = target;
    request.source_schema = schema;
    request.target_schema = command_line.target_schema.empty() ? schema : command_line.target_schema;
    files.push_back(SchemaFile{request.pipeline + ".yaml", schema, render_pipeline(request, tables), counts});
  }

  if (const int refused = refuse_clashes(files, by_schema, command_line.target_schema, err); refused != kExitOk) {
    return refused;
  }

  const std::string summary = fmt::format(
      "{} tables found in {} schema{}: {} incremental ({} of them insert-only), {}{} snapshot, {} left out{}\n",
      total.found, by_schema.size(), by_schema.size() == 1 ? "" : "s", total.incremental, total.insert_only,
      appended(total), total.snapshot, total.left_out,
      unloadable.empty() ? "" : "; no table to load in schema " + fmt::format("{}", fmt::join(unloadable, ", ")));

  if (command_line.write_dir.empty()) {
    for (const SchemaFile& f : files) {
      if (files.size() > 1) out << "# ---- " << f.name << " ----\n";
      out << f.text;
    }
    err << summary;
    return kExitOk;
  }
  if (const int written = write_files(files, command_line, out, err); written != kExitOk) return written;
  out << summary;
  return kExitOk;
}

}  // namespace tidemark
