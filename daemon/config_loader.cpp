#include "daemon/config_loader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tidemark {
namespace {

namespace fs = std::filesystem;

ConfigError file_error(const std::string& path, const std::string& message) {
  ConfigError e;
  e.file = path;
  e.message = message;
  return e;
}

// Reads a whole file; on failure records why and returns false.
bool read_file(const std::string& path, std::string& text, std::vector<ConfigError>& errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.push_back(file_error(path, std::string("cannot read file: ") + std::strerror(errno)));
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

}  // namespace

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
  if (!daemon.value) {
    out.errors = std::move(daemon.errors);
    return out;
  }

  const std::string dir = pipelines_dir_path(*daemon.value);
  std::vector<std::string> paths;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == ".yaml" && !p.filename().string().empty() && p.filename().string()[0] != '.' &&
        it->is_regular_file(ec)) {
      paths.push_back(p.string());
    }
  }
  if (ec) {
    out.errors.push_back(file_error(dir, "cannot list pipelines_dir: " + ec.message()));
    return out;
  }
  std::sort(paths.begin(), paths.end());

  std::vector<ConfigText> files;
  for (const std::string& path : paths) {
    ConfigText file{path, {}};
    if (read_file(path, file.text, out.errors)) files.push_back(std::move(file));
  }
  if (!out.errors.empty()) return out;
  return parse_config(*daemon.value, files);
}

}  // namespace tidemark
