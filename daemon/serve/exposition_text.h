// Prometheus' text exposition format (version 0.0.4), written straight
// into a string: a family's HELP and TYPE lines, samples with their labels
// escaped, histograms as _count, _sum and cumulative _bucket lines up to
// le="+Inf". It knows nothing of tidemark's series (MetricsRegistry says
// which to write). Not thread-safe; one per scrape.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tidemark {

// A label's name and its value, unescaped.
using Label = std::pair<std::string_view, std::string_view>;

class ExpositionText {
 public:
  explicit ExpositionText(std::string& out) : out_(out) {}

  // "# HELP name help" and "# TYPE name type" (counter, gauge, histogram).
  void family(std::string_view name, std::string_view help, std::string_view type);
  // One sample line. `labels` must be in the order they are to be printed
  // (prometheus-cpp printed them sorted by name; so does tidemark).
  void sample(std::string_view name, std::initializer_list<Label> labels, double value);
  // One histogram's lines: _count, _sum, then one _bucket per upper bound
  // (`counts[i]`: observations in bucket i alone, the last being +Inf) with
  // cumulative counts, `le` after the other labels.
  void histogram(std::string_view name, std::initializer_list<Label> labels, const std::vector<double>& bounds,
                 const std::vector<std::uint64_t>& counts, double sum);

  // A value as prometheus-cpp 1.0 printed it: up to 16 significant digits,
  // integers without a decimal point, "Nan", "+Inf", "-Inf". Prometheus
  // reads NaN in any case (Go's ParseFloat); "Nan" keeps the output what
  // it was.
  static void append_value(std::string& out, double value);
  // A label value with `\`, `"` and newline escaped.
  static void append_escaped(std::string& out, std::string_view value);

 private:
  void head(std::string_view name, std::string_view suffix, std::initializer_list<Label> labels,
            std::string_view le = {});

  std::string& out_;
};

}  // namespace tidemark
