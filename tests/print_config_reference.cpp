// Prints the configuration schema as Markdown, for docs/configuration.md.
#include <iostream>

#include "core/config/config_schema.h"

int main() {
  std::cout << tidemark::render_schema_reference();
  return 0;
}
