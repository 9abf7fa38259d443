// What every `tidemark` command takes (SPEC §4): the daemon configuration
// file. Each command's options struct derives from it, so a command and
// its tests carry the one path it is run with. A plain value; no thread
// contract of its own.
#pragma once

#include <string>

namespace tidemark {

inline constexpr const char* kDefaultConfigPath = "/etc/tidemark/tidemark.yaml";

struct CommonOptions {
  std::string config_path = kDefaultConfigPath;
};

}  // namespace tidemark
