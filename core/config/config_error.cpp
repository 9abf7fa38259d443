#include "core/config/config_error.h"

namespace tidemark {

std::string ConfigError::to_string() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": ";
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  return out;
}

}  // namespace tidemark
