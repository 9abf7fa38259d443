#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  // Runs log a line each; only problems are worth showing among test output.
  spdlog::set_level(spdlog::level::warn);
  return doctest::Context(argc, argv).run();
}
