// One problem found in a configuration file: where it is (file, line,
// column, key path) and what is wrong. A plain value type.
#pragma once

#include <string>

namespace tidemark {

struct ConfigError {
  std::string file;
  int line = 0;    // 1-based; 0 when the problem is the file as a whole
  int column = 0;  // 1-based
  std::string key_path;  // e.g. "tables[0].lookback"; empty for the file itself
  std::string message;

  // "file:line:column: key_path: message", leaving out what is unknown.
  std::string to_string() const;
};

}  // namespace tidemark
