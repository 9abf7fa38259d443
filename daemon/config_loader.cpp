#include "daemon/config_loader.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <thread>

#include "daemon/small_file.h"

namespace tidemark {
namespace {

// Each pipeline file parsed on its own, on as many threads as there are
// cores: YAML parsing is most of the time a configuration of thousands of
// tables takes to load (`status`, a start, a reload).
std::vector<PipelineFileOutcome> parse_files_at_once(const DaemonConfig& daemon, const std::vector<ConfigText>& files,
                                                     DaemonCheck check) {
  std::vector<PipelineFileOutcome> parsed(files.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) parsed[i] = parse_pipeline_file(daemon, files[i], check);
  };
  const std::size_t threads = std::min<std::size_t>(files.size(), std::max(1U, std::thread::hardware_concurrency()));
  std::vector<std::thread> helpers;
  try {
    for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  } catch (const std::system_error&) {
    // No thread to be had (a container's limit): the files this one
    // parses are as well parsed.
  }
  work();
  for (std::thread& helper : helpers) helper.join();
  return parsed;
}

namespace fs = std::filesystem;

ConfigError file_error(const std::string& path, const std::string& message) {
  ConfigError e;
  e.file = path;
  e.message = message;
  return e;
}

// Reads a whole regular file of at most kMaxConfigFileBytes; on failure
// records why and returns false.
bool read_file(const std::string& path, std::string& text, std::vector<ConfigError>& errors,
               const char* expected = "name the daemon file (tidemark.yaml) or a pipeline file") {
  using Kind = SmallFileFailure::Kind;
  auto read = read_small_file(path, kMaxConfigFileBytes);
  if (auto* whole = std::get_if<std::string>(&read)) {
    text = std::move(*whole);
    return true;
  }
  const SmallFileFailure& failed = std::get<SmallFileFailure>(read);
  switch (failed.kind) {
    case Kind::CannotOpen:
    case Kind::CannotRead: errors.push_back(file_error(path, "cannot read file: " + failed.detail)); break;
    case Kind::NotRegular:
      errors.push_back(file_error(path, "is " + failed.detail + ", not a YAML file: " + expected));
      break;
    case Kind::TooBig:
      errors.push_back(file_error(path, "is " + std::to_string(failed.size) + " bytes, more than the " +
                                            std::to_string(kMaxConfigFileBytes) +
                                            " a configuration file may hold: split its pipelines into several files"));
      break;
    case Kind::Grew:
      errors.push_back(
          file_error(path, "grew past " + std::to_string(kMaxConfigFileBytes) + " bytes while being read"));
      break;
  }
  return false;
}

// The *.yaml files of pipelines_dir, sorted. Names starting with a dot are
// skipped; anything else named *.yaml that is not a regular file (a
// dangling symlink, a folder, a FIFO) is an error rather than ignored.
std::vector<std::string> pipeline_files(const std::string& dir, std::vector<ConfigError>& errors) {
  std::vector<std::string> paths;
  std::vector<ConfigError> entry_errors;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (p.extension() != ".yaml" || name.empty() || name[0] == '.') continue;
    std::error_code status_ec;
    const fs::file_status target = fs::status(p, status_ec);
    if (fs::is_regular_file(target)) {
      paths.push_back(p.string());
    } else if (fs::is_symlink(fs::symlink_status(p, status_ec)) && !fs::exists(target)) {
      std::error_code link_ec;
      entry_errors.push_back(file_error(
          p.string(), "is a symlink to " + fs::read_symlink(p, link_ec).string() +
                          ", which does not exist: fix the link, or remove it from pipelines_dir"));
    } else {
      entry_errors.push_back(file_error(p.string(), "is " + file_type_words(target.type()) +
                                                        ", not a pipeline file: rename it (pipeline files end in "
                                                        ".yaml) or move it out of pipelines_dir"));
    }
  }
  if (ec) {
    errors.push_back(file_error(dir, "cannot list pipelines_dir: " + ec.message()));
    return {};
  }
  std::sort(paths.begin(), paths.end());
  std::sort(entry_errors.begin(), entry_errors.end(),
            [](const ConfigError& a, const ConfigError& b) { return a.file < b.file; });
  errors.insert(errors.end(), entry_errors.begin(), entry_errors.end());
  return paths;
}

// Reads and parses the file metrics.web_config names into daemon.metrics.web,
// its files made relative to its own folder (as exporter-toolkit does).
void load_web_config(DaemonConfig& daemon, std::vector<ConfigError>& errors) {
  MetricsConfig& metrics = daemon.metrics;
  if (metrics.web_config.empty()) return;
  ConfigText file{web_config_path(daemon), {}};
  std::vector<ConfigError> read_errors;
  if (!read_file(file.path, file.text, read_errors, "name a web configuration file (tls_server_config, basic_auth_users)")) {
    // Said where the file is named, so that a wrong path is found there.
    const SourceLocation& at = metrics.web_config_location;
    for (const ConfigError& e : read_errors) {
      errors.push_back(ConfigError{at.file, at.line, at.column, "metrics.web_config",
                                   "the web configuration " + e.file + " " + e.message +
                                       " (web_config is relative to this file's folder)"});
    }
    return;
  }
  auto parsed = parse_web_config(file);
  errors.insert(errors.end(), parsed.errors.begin(), parsed.errors.end());
  if (!parsed.value) return;
  const fs::path folder = fs::path(file.path).parent_path();
  const auto resolve = [&](WebConfigPath& p) {
    if (!fs::path(p.path).is_absolute()) p.path = (folder / p.path).lexically_normal().string();
  };
  if (parsed.value->tls) {
    resolve(parsed.value->tls->cert_file);
    resolve(parsed.value->tls->key_file);
    if (parsed.value->tls->client_ca_file) resolve(*parsed.value->tls->client_ca_file);
  }
  metrics.web = std::move(parsed.value);
}

}  // namespace

std::string web_config_path(const DaemonConfig& daemon) {
  if (daemon.metrics.web_config.empty()) return {};
  const fs::path file(daemon.metrics.web_config);
  if (file.is_absolute()) return file.string();
  return (fs::path(daemon.file).parent_path() / file).lexically_normal().string();
}

std::string pipelines_dir_path(const DaemonConfig& daemon) {
  const fs::path dir(daemon.pipelines_dir);
  if (dir.is_absolute()) return dir.string();
  return (fs::path(daemon.file).parent_path() / dir).lexically_normal().string();
}

ParseOutcome<Config> load_config(const std::string& daemon_config_path) {
  ParseOutcome<Config> out;
  ConfigText daemon_text{daemon_config_path, {}};
  if (!read_file(daemon_config_path, daemon_text.text, out.errors)) return out;
  auto daemon = parse_daemon_config(daemon_text);
  out.errors = std::move(daemon.errors);
  // With errors in the daemon file, the pipeline files are still checked
  // (all errors of all files at once), unless pipelines_dir itself is wrong.
  const bool dir_known =
      daemon.value || (daemon.partial && std::none_of(out.errors.begin(), out.errors.end(), [](const ConfigError& e) {
                         return e.key_path == "pipelines_dir";
                       }));
  if (daemon.value) {
    load_web_config(*daemon.value, out.errors);
  } else if (daemon.partial && std::none_of(out.errors.begin(), out.errors.end(), [](const ConfigError& e) {
               return e.key_path == "metrics.web_config";
             })) {
    load_web_config(*daemon.partial, out.errors);
  }
  if (!dir_known) return out;
  const DaemonConfig& daemon_config = daemon.value ? *daemon.value : *daemon.partial;

  const std::vector<std::string> paths = pipeline_files(pipelines_dir_path(daemon_config), out.errors);
  std::vector<ConfigText> files;
  for (const std::string& path : paths) {
    ConfigText file{path, {}};
    if (read_file(path, file.text, out.errors)) files.push_back(std::move(file));
  }
  auto parsed = assemble_config(
      daemon_config,
      parse_files_at_once(daemon_config, files,
                          daemon.value ? DaemonCheck::Connections : DaemonCheck::WithoutConnections));
  out.errors.insert(out.errors.end(), parsed.errors.begin(), parsed.errors.end());
  if (out.errors.empty()) out.value = std::move(parsed.value);
  return out;
}

}  // namespace tidemark
