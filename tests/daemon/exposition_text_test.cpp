// Prometheus' text format as the registry writes it: escaped label values,
// HELP and TYPE once per family, histograms with cumulative buckets up to
// +Inf, and numbers printed as prometheus-cpp printed them (what Prometheus
// has always parsed from tidemark).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "daemon/serve/exposition_text.h"

namespace tidemark {
namespace {

std::string value_text(double value) {
  std::string out;
  ExpositionText::append_value(out, value);
  return out;
}

}  // namespace

TEST_CASE("label values escape the backslash, the double quote and the newline, nothing else") {
  std::string out;
  ExpositionText text(out);
  text.sample("m", {{"pipeline", "a\\b\"c\nd"}, {"table", "é t,{x}="}}, 1);
  CHECK(out == "m{pipeline=\"a\\\\b\\\"c\\nd\",table=\"é t,{x}=\"} 1\n");
}

TEST_CASE("a family's HELP and TYPE come once, before its samples; no labels, no braces") {
  std::string out;
  ExpositionText text(out);
  text.family("tidemark_runs_queued", "Firings waiting \\ for a\nworker", "gauge");
  text.sample("tidemark_runs_queued", {}, 3);
  CHECK(out ==
        "# HELP tidemark_runs_queued Firings waiting \\\\ for a\\nworker\n"
        "# TYPE tidemark_runs_queued gauge\n"
        "tidemark_runs_queued 3\n");
}

TEST_CASE("numbers: integers without decimals, 16 significant digits, NaN and infinities by name") {
  const struct {
    double value;
    const char* text;
  } rows[] = {
      {0, "0"},
      {1, "1"},
      {3600, "3600"},
      {-2.5, "-2.5"},
      {0.1, "0.1"},
      {1.0 / 3, "0.3333333333333333"},
      {1764460800, "1764460800"},
      {1764460800.123456, "1764460800.123456"},
      {1e-7, "1e-07"},
      {1e17, "1e+17"},
      {123456789012345678.0, "1.234567890123457e+17"},
      {2.0e15 + 0.5, "2000000000000000"},
      {-0.0, "-0"},
      {std::numeric_limits<double>::quiet_NaN(), "Nan"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    CHECK(value_text(row.value) == row.text);
  }
}

TEST_CASE("a histogram: _count, _sum, then cumulative buckets with le after the other labels, up to +Inf") {
  std::string out;
  ExpositionText text(out);
  // 0.1 (equal to a bound: in its bucket), 0.3, and 100 (beyond every bound).
  text.histogram("h", {{"pipeline", "p"}}, {0.1, 0.5, 1, 2.5}, {1, 1, 0, 0, 1}, 100.4);
  CHECK(out ==
        "h_count{pipeline=\"p\"} 3\n"
        "h_sum{pipeline=\"p\"} 100.4\n"
        "h_bucket{pipeline=\"p\",le=\"0.1\"} 1\n"
        "h_bucket{pipeline=\"p\",le=\"0.5\"} 2\n"
        "h_bucket{pipeline=\"p\",le=\"1\"} 2\n"
        "h_bucket{pipeline=\"p\",le=\"2.5\"} 2\n"
        "h_bucket{pipeline=\"p\",le=\"+Inf\"} 3\n");
}

TEST_CASE("a histogram without labels still gets braces for le") {
  std::string out;
  ExpositionText text(out);
  text.histogram("h", {}, {1}, {0, 0}, 0);
  CHECK(out ==
        "h_count 0\n"
        "h_sum 0\n"
        "h_bucket{le=\"1\"} 0\n"
        "h_bucket{le=\"+Inf\"} 0\n");
}

}  // namespace tidemark
