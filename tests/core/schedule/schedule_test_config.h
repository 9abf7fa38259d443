// For the schedule suites: instants from their text and configurations
// from a pipeline file's text, beside a daemon file with one connection
// `w`. Test code only; each call parses afresh.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "core/config/config_parser.h"
#include "core/time/instant_text.h"

namespace tidemark::testing {

inline Instant at(const std::string& text) { return *parse_instant(text); }

inline Config config_of_pipeline(const std::string& pipeline_yaml) {
  const auto daemon = parse_daemon_config({"t.yaml", "state: w\nconnections: { w: { dsn: x } }\n"});
  auto config = parse_config(*daemon.value, {{"p.yaml", pipeline_yaml}});
  REQUIRE(config.value);
  return std::move(*config.value);
}

// One table `t` of pipeline `p`, due at the start of every hour in Berlin.
inline Config hourly_config() {
  return config_of_pipeline(R"(pipeline: p
source: w
target: w
schedule: "0 * * * *"
timezone: Europe/Berlin
tables:
  - { name: t, source_table: s.t, target_table: r.t, key: [id], cursor: id }
)");
}

}  // namespace tidemark::testing
