#include "daemon/serve/exposition_text.h"

#include <charconv>
#include <cmath>

namespace tidemark {

void ExpositionText::append_value(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "Nan";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-Inf" : "+Inf";
    return;
  }
  char buffer[32];
  std::to_chars_result written{};
  // Counters, row counts and Unix seconds are whole numbers: printed as
  // integers, which is what "%.16g" makes of them too, several times faster.
  if (value == std::trunc(value) && std::fabs(value) < 1e15 && !(value == 0 && std::signbit(value))) {
    written = std::to_chars(buffer, buffer + sizeof buffer, static_cast<std::int64_t>(value));
  } else {
    written = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 16);
  }
  out.append(buffer, written.ptr);
}

void ExpositionText::append_escaped(std::string& out, std::string_view value) {
  // Names almost never need escaping: appended whole when they do not.
  if (value.find_first_of("\\\"\n") == std::string_view::npos) {
    out += value;
    return;
  }
  for (const char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

void ExpositionText::family(std::string_view name, std::string_view help, std::string_view type) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  // In HELP only the backslash and the newline are escaped.
  for (const char c : help) {
    if (c == '\\') {
      out_ += "\\\\";
    } else if (c == '\n') {
      out_ += "\\n";
    } else {
      out_ += c;
    }
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void ExpositionText::head(std::string_view name, std::string_view suffix, std::initializer_list<Label> labels,
                          std::string_view le) {
  out_ += name;
  out_ += suffix;
  if (labels.size() == 0 && le.empty()) {
    out_ += ' ';
    return;
  }
  char separator = '{';
  for (const Label& label : labels) {
    out_ += separator;
    out_ += label.first;
    out_ += "=\"";
    append_escaped(out_, label.second);
    out_ += '"';
    separator = ',';
  }
  if (!le.empty()) {
    out_ += separator;
    out_ += "le=\"";
    out_ += le;
    out_ += '"';
  }
  out_ += "} ";
}

void ExpositionText::sample(std::string_view name, std::initializer_list<Label> labels, double value) {
  head(name, {}, labels);
  append_value(out_, value);
  out_ += '\n';
}

void ExpositionText::histogram(std::string_view name, std::initializer_list<Label> labels,
                               const std::vector<double>& bounds, const std::vector<std::uint64_t>& counts,
                               double sum) {
  std::uint64_t total = 0;
  for (const std::uint64_t c : counts) total += c;
  head(name, "_count", labels);
  out_ += std::to_string(total);
  out_ += '\n';
  head(name, "_sum", labels);
  append_value(out_, sum);
  out_ += '\n';
  std::uint64_t cumulative = 0;
  std::string le;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    le.clear();
    append_value(le, i < bounds.size() ? bounds[i] : HUGE_VAL);
    head(name, "_bucket", labels, le);
    out_ += std::to_string(cumulative);
    out_ += '\n';
  }
}

}  // namespace tidemark
