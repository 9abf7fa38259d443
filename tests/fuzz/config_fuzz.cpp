// libFuzzer target for the configuration parser, from YAML text to a
// Config or errors: the input is a daemon file and a pipeline file split
// at the first NUL byte (without one, the whole input is tried as each
// file against a valid counterpart). Any input either parses or yields
// errors, never both and never neither, every error names its file, and
// nothing crashes, hangs or leaks.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/config/config_parser.h"

namespace {

const char* const kDaemon = "state: w\nconnections: { w: { dsn: x }, s: { dsn: y } }\n";
const char* const kPipeline =
    "pipeline: p\nsource: s\ntarget: w\nschedule: '@hourly'\ntables:\n"
    "  - { name: t, source_table: s.t, target_table: r.t, key: [id], cursor: c }\n";

template <class T>
void check_outcome(const tidemark::ParseOutcome<T>& outcome) {
  if (outcome.value.has_value() == !outcome.errors.empty()) std::abort();  // exactly one of the two
  for (const tidemark::ConfigError& e : outcome.errors) {
    if (e.file.empty() || e.message.empty() || e.line < 0 || e.column < 0) std::abort();
    if (e.to_string().empty()) std::abort();
  }
}

void parse_pair(const std::string& daemon_text, const std::string& pipeline_text) {
  const auto daemon = tidemark::parse_daemon_config({"tidemark.yaml", daemon_text});
  check_outcome(daemon);
  if (!daemon.value && !daemon.partial) return;
  const tidemark::DaemonConfig& config = daemon.value ? *daemon.value : *daemon.partial;
  const auto parsed = tidemark::parse_config(
      config, {{"p.yaml", pipeline_text}, {"q.yaml", pipeline_text}},
      daemon.value ? tidemark::DaemonCheck::Connections : tidemark::DaemonCheck::WithoutConnections);
  check_outcome(parsed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t split = text.find('\0');
  if (split != std::string_view::npos) {
    parse_pair(std::string(text.substr(0, split)), std::string(text.substr(split + 1)));
  } else {
    parse_pair(std::string(text), kPipeline);
    parse_pair(kDaemon, std::string(text));
  }
  return 0;
}
