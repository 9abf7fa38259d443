// The shipped alert rules and their runbooks agree: every rule has a
// description and a runbook_url naming its own section of
// docs/runbooks.md, that section exists, every link into the runbooks
// (from the rules, the docs or the runbooks themselves) lands on a
// heading, and the promtool tests check each alert's annotations.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace tidemark {
namespace {

const std::string kRoot = TIDEMARK_SOURCE_DIR;
const std::string kRunbooks = "docs/runbooks.md";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The anchor GitHub (and most Markdown renderers) give a heading: lower
// case, punctuation dropped, spaces as hyphens.
std::string anchor_of(const std::string& heading) {
  std::string out;
  for (const char c : heading) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      out += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

// Every heading's anchor in a Markdown text (fenced code is not a heading).
std::set<std::string> anchors_in(const std::string& markdown) {
  std::set<std::string> out;
  std::istringstream lines(markdown);
  std::string line;
  bool fenced = false;
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.empty() || line[0] != '#') continue;
    const std::size_t text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ') continue;
    out.insert(anchor_of(line.substr(text + 1)));
  }
  return out;
}

// alert name -> its rule, in file order.
std::map<std::string, YAML::Node> alert_rules() {
  std::map<std::string, YAML::Node> out;
  const YAML::Node file = YAML::LoadFile(kRoot + "/config/prometheus/tidemark-alerts.yml");
  for (const YAML::Node& group : file["groups"]) {
    for (const YAML::Node& rule : group["rules"]) {
      if (rule["alert"]) out[rule["alert"].as<std::string>()] = rule;
    }
  }
  return out;
}

std::string annotation(const YAML::Node& annotations, const char* name) {
  return annotations && annotations[name] ? annotations[name].as<std::string>() : std::string();
}

}  // namespace

TEST_CASE("every alert rule has a description and a runbook_url to its own section of docs/runbooks.md") {
  const auto rules = alert_rules();
  REQUIRE(rules.size() >= 10);
  const std::set<std::string> anchors = anchors_in(read_file(kRoot + "/" + kRunbooks));
  for (const auto& [alert, rule] : rules) {
    CAPTURE(alert);
    const YAML::Node annotations = rule["annotations"];
    CHECK_FALSE(annotation(annotations, "summary").empty());
    CHECK_FALSE(annotation(annotations, "description").empty());
    // The anchor is the alert's name, so a link outlives edits of the text.
    const std::string anchor = anchor_of(alert);
    CHECK(annotation(annotations, "runbook_url") == kRunbooks + "#" + anchor);
    CHECK_MESSAGE(anchors.count(anchor) == 1, kRunbooks << " has no section \"## " << alert << "\"");
  }
  // And no section for an alert that is not shipped.
  for (const std::string& anchor : anchors) {
    if (anchor.rfind("tidemark", 0) != 0) continue;
    CHECK_MESSAGE(std::any_of(rules.begin(), rules.end(), [&](const auto& r) { return anchor_of(r.first) == anchor; }),
                  kRunbooks << " has a section #" << anchor << " for no rule");
  }
}

TEST_CASE("every link into docs/runbooks.md lands on one of its headings") {
  const std::set<std::string> anchors = anchors_in(read_file(kRoot + "/" + kRunbooks));
  // From the runbooks themselves (#anchor) and from every other doc and
  // rule file (runbooks.md#anchor).
  const std::regex inner(R"(\]\(#([-\w]+)\))");
  const std::regex outer(R"(runbooks\.md#([-\w]+))");
  int links = 0;
  const std::string own = read_file(kRoot + "/" + kRunbooks);
  for (auto it = std::sregex_iterator(own.begin(), own.end(), inner); it != std::sregex_iterator(); ++it, ++links) {
    CHECK_MESSAGE(anchors.count((*it)[1]) == 1, kRunbooks << " links to #" << (*it)[1] << ", which is no heading");
  }
  std::vector<std::filesystem::path> files{kRoot + "/README.md", kRoot + "/config/prometheus/tidemark-alerts.yml",
                                           kRoot + "/config/prometheus/tidemark-alerts.test.yml"};
  for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/docs")) files.push_back(entry.path());
  for (const auto& path : files) {
    const std::string text = read_file(path.string());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), outer); it != std::sregex_iterator(); ++it, ++links) {
      CHECK_MESSAGE(anchors.count((*it)[1]) == 1,
                    path.filename().string() << " links to runbooks.md#" << (*it)[1] << ", which is no heading");
    }
  }
  CHECK(links > 20);  // the rules' and their tests' links at least
}

TEST_CASE("the promtool tests check the annotations, runbook_url included, of every alert firing") {
  const auto rules = alert_rules();
  const YAML::Node tests = YAML::LoadFile(kRoot + "/config/prometheus/tidemark-alerts.test.yml");
  std::map<std::string, int> checked;  // alert -> firing alerts whose annotations are checked
  for (const YAML::Node& test : tests["tests"]) {
    for (const YAML::Node& case_ : test["alert_rule_test"]) {
      const std::string alert = case_["alertname"].as<std::string>();
      for (const YAML::Node& expected : case_["exp_alerts"]) {
        CAPTURE(alert);
        // promtool compares every annotation, so each firing alert must
        // name them all; an alert without exp_annotations checks none.
        REQUIRE(expected["exp_annotations"]);
        CHECK(annotation(expected["exp_annotations"], "runbook_url") == kRunbooks + "#" + anchor_of(alert));
        ++checked[alert];
      }
    }
  }
  for (const auto& [alert, rule] : rules) {
    CAPTURE(alert);
    CHECK(checked[alert] >= 1);
  }
}

}  // namespace tidemark
