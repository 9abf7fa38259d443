#include "core/config/config_schema.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <date/tz.h>

#include <algorithm>
#include <regex>
#include <set>

#include "core/config/byte_size.h"
#include "core/config/table_modes.h"
#include "core/time/cron_schedule.h"
#include "core/time/duration.h"

namespace tidemark {
namespace {


constexpr const char* kDurationType = "duration: 30s, 15m, 2h, 1d";
constexpr const char* kByteSizeType = "size: 64MB, 1GB (B, kB, MB, GB, TB)";

std::optional<std::int64_t> read_byte_size(ConfigReader& r, const YAML::Node& node, std::int64_t min) {
  const auto size = read_parsed(r, node, parse_byte_size);
  if (size && *size < min) {
    r.error(node, "must be at least " + format_byte_size(min) + ", got \"" + node.Scalar() + "\"");
    return std::nullopt;
  }
  return size;
}

// ---- scalar readers that exist only for one key ----

void read_timezone(ConfigReader& r, const YAML::Node& node, PipelineConfig& p) {
  auto name = read_string(r, node);
  if (!name) return;
  try {
    p.zone = date::locate_zone(*name);
    p.timezone = *name;
  } catch (const std::exception&) {
    r.error(node, "unknown time zone \"" + *name + "\"; use an IANA name such as UTC or Europe/Berlin");
  }
}

std::optional<CronSchedule> read_schedule(ConfigReader& r, const YAML::Node& node) {
  return read_parsed(r, node, CronSchedule::parse);
}

// ISO-8601 date or timestamp (with optional offset), or an integer.
std::optional<std::string> read_cursor_literal(ConfigReader& r, const YAML::Node& node) {
  static const std::regex kLiteral(
      R"(-?[0-9]{1,19}|[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?)");
  auto text = read_string(r, node);
  if (!text) return std::nullopt;
  if (!std::regex_match(*text, kLiteral)) {
    r.error(node, "expected an ISO-8601 date or timestamp (2026-01-01, 2026-01-01T00:00:00Z) or an integer, got \"" +
                      *text + "\"");
    return std::nullopt;
  }
  return text;
}

// Why `host` (brackets removed) cannot be listened on, or nothing: an IPv4
// literal of four parts 0-255, an IPv6 literal, or a DNS name.
std::optional<std::string> listen_host_problem(const std::string& host, bool bracketed) {
  if (bracketed) {
    in6_addr v6{};
    if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return std::nullopt;
    return "\"" + host + "\" in brackets is not an IPv6 address";
  }
  if (host.find_first_not_of("0123456789.") == std::string::npos) {
    in_addr v4{};
    if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return std::nullopt;
    return "\"" + host + "\" is not an IPv4 address (four numbers 0-255, such as 127.0.0.1)";
  }
  static const std::regex kName(R"([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?)");
  if (host.size() <= 253 && std::regex_match(host, kName)) return std::nullopt;
  return "\"" + host + "\" is neither an IP address nor a host name";
}

std::optional<MetricsConfig> read_listen(ConfigReader& r, const YAML::Node& node) {
  auto text = read_string(r, node);
  if (!text) return std::nullopt;
  MetricsConfig out;
  out.listen = *text;
  const std::size_t colon = text->rfind(':');
  bool ok = colon != std::string::npos && colon > 0;
  if (ok) {
    out.host = text->substr(0, colon);
    if (out.host.front() == '[') {
      ok = out.host.size() > 2 && out.host.back() == ']';
      out.host = out.host.substr(1, out.host.size() - 2);
    } else {
      ok = out.host.find(':') == std::string::npos;
    }
    const std::string port = text->substr(colon + 1);
    unsigned long value = 0;
    ok = ok && !port.empty() && port.size() <= 5 &&
         port.find_first_not_of("0123456789") == std::string::npos && (value = std::stoul(port)) >= 1 &&
         value <= 65535;
    out.port = static_cast<std::uint16_t>(value);
  }
  if (!ok) {
    r.error(node, "expected host:port such as 127.0.0.1:9464 or [::1]:9464, got \"" + *text + "\"");
    return std::nullopt;
  }
  if (const auto problem = listen_host_problem(out.host, text->front() == '[')) {
    r.error(node, *problem + ": expected host:port such as 127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464");
    return std::nullopt;
  }
  return out;
}

// Marks a key that a table of its mode must not have.
void reject_key(ConfigReader& r, const YAML::Node& table, std::string_view key, const std::string& why) {
  const YAML::Node value = table[std::string(key)];
  if (!value.IsDefined()) return;
  ConfigReader::Scope scope(r, std::string(key));
  r.error(value, why);
}

void require_key(ConfigReader& r, const YAML::Node& table, std::string_view key, std::string_view why) {
  if (table[std::string(key)].IsDefined()) return;
  r.error(table, "missing required key \"" + std::string(key) + "\": " + std::string(why));
}

// The least lookback that always reaches the partition before the newest
// complete one: an hour, a day, and for months 31 days (from the first of
// a month, 28 days fall short of the month before unless it is February).
std::chrono::seconds shortest_partition(PartitionUnit unit) {
  switch (unit) {
    case PartitionUnit::Hour: return std::chrono::hours(1);
    case PartitionUnit::Day: return std::chrono::hours(24);
    case PartitionUnit::Month: return std::chrono::hours(24 * 31);
  }
  return std::chrono::hours(24);
}

// What a partition table's lookback and deletes: can say: a duration of
// at least one partition, and a reconcile that rewrites partitions, with
// nothing to mark.
void check_partition_keys(ConfigReader& r, const YAML::Node& node, const TableConfig& t) {
  if (t.partition && !t.lookback.is_zero()) {
    ConfigReader::Scope scope(r, "lookback");
    const std::chrono::seconds least = shortest_partition(t.partition->unit);
    if (t.lookback.kind == CursorSpan::Kind::Count) {
      r.error(node["lookback"], "a partition table's lookback is a duration (3d: the done partitions that start "
                                "within it before the newest complete one are checked again), not a count");
    } else if (std::chrono::seconds(t.lookback.amount) < least) {
      r.error(node["lookback"], "must be 0s or at least " + format_duration(least) +
                                    ", which reaches the partition before the newest complete one; a shorter one "
                                    "would check again only the newest complete partition, which " +
                                    format_duration(least) + " does too");
    }
  }
  if (t.deletes && t.deletes->action == DeleteAction::Mark) {
    ConfigReader::Scope deletes(r, "deletes");
    ConfigReader::Scope scope(r, "action");
    r.error(node["deletes"]["action"], "a partition table's reconcile rewrites the partitions that differ, deleting "
                                       "what left them; there is no row to mark: remove action and mark_column");
  }
}

void check_table(ConfigReader& r, const YAML::Node& node, TableConfig& t) {
  for (const ModeKey& k : table_mode(t.mode).keys) {
    if (!k.required_because.empty()) require_key(r, node, k.key, k.required_because);
  }
  for (const std::string_view key : mode_keys()) {
    if (const auto why = refused_key(t.mode, key)) reject_key(r, node, key, *why);
  }
  if (takes_key(t.mode, "columns") && !t.columns.empty()) {
    for (const std::string& k : t.key) {
      if (std::find(t.columns.begin(), t.columns.end(), k) == t.columns.end()) {
        ConfigReader::Scope scope(r, "columns");
        r.error(node["columns"], "key column \"" + k + "\" must be one of the columns");
      }
    }
    if (!t.cursor.empty() && std::find(t.columns.begin(), t.columns.end(), t.cursor) == t.columns.end()) {
      ConfigReader::Scope scope(r, "columns");
      r.error(node["columns"], "cursor column \"" + t.cursor + "\" must be one of the columns");
    }
  }
  // The mark is the target's own column: a loaded column would be
  // overwritten by every load, and a key or cursor cannot be a mark.
  if (takes_key(t.mode, "deletes") && t.deletes && !t.deletes->mark_column.empty()) {
    const std::string& mark = t.deletes->mark_column;
    const bool loaded = std::find(t.columns.begin(), t.columns.end(), mark) != t.columns.end() ||
                        std::find(t.key.begin(), t.key.end(), mark) != t.key.end() || t.cursor == mark;
    if (loaded) {
      ConfigReader::Scope deletes(r, "deletes");
      ConfigReader::Scope scope(r, "mark_column");
      r.error(node["deletes"]["mark_column"], "mark_column \"" + mark +
                                                  "\" is a loaded column (key, cursor or columns); it must be a "
                                                  "target column of its own");
    }
  }
  if (table_mode(t.mode).reconcile == ReconcileBy::Partitions) check_partition_keys(r, node, t);
  if (takes_key(t.mode, "query") && !t.query.empty() &&
      (!std::regex_search(t.query, std::regex(R"(\$1(?![0-9]))")) ||
       !std::regex_search(t.query, std::regex(R"(\$2(?![0-9]))")))) {
    ConfigReader::Scope scope(r, "query");
    r.error(node["query"], "the query must use $1 (window lo) and $2 (window hi) to select one partition");
  }
}

// `inputs:` as written: names, each resolved once every file is read.
void read_inputs(ConfigReader& r, const YAML::Node& node, TableConfig& t) {
  r.read_list(node, [&](const YAML::Node& item) {
    auto name = read_string(r, item);
    if (!name) return;
    for (const TableConfig::WrittenInput& earlier : t.inputs_written) {
      if (earlier.name == *name) {
        r.error(item, "\"" + *name + "\" is named twice; name each input once");
        return;
      }
    }
    t.inputs_written.push_back({*name, r.location(item), r.path()});
  });
}

// A table key's meaning, led by the modes that take it when it is a
// mode's own: "incremental and snapshot (required): the table read".
std::string table_key_meaning(std::string_view key, std::string_view meaning) {
  if (std::find(mode_keys().begin(), mode_keys().end(), key) == mode_keys().end()) return std::string(meaning);
  return key_modes_text(key) + ": " + std::string(meaning);
}

std::optional<TableMode> read_table_mode(ConfigReader& r, const YAML::Node& node) {
  std::vector<std::pair<std::string_view, TableMode>> choices;
  for (const TableModeSpec& m : table_modes()) choices.emplace_back(m.name, m.mode);
  return read_enum<TableMode>(r, node, choices);
}

std::string table_mode_names() {
  std::string out;
  for (const TableModeSpec& m : table_modes()) out += (out.empty() ? "" : " | ") + std::string(m.name);
  return out;
}

std::string table_mode_meaning() {
  std::string out = "how the table is loaded";
  const char* separator = ": ";
  for (const TableModeSpec& m : table_modes()) {
    out += separator + std::string(m.name) + ", " + std::string(m.loads);
    separator = "; ";
  }
  return out;
}

}  // namespace

const MapSchema<ConnectionConfig>& connection_schema() {
  static const MapSchema<ConnectionConfig> schema{
      "connections.<name>",
      {
          {"dsn", Presence::Optional, "", "string", "libpq connection string or URI",
           [](ConfigReader& r, const YAML::Node& n, ConnectionConfig& c) {
             if (auto v = read_string(r, n)) {
               c.source = DsnSource::Inline;
               c.value = *v;
             }
           }},
          {"dsn_env", Presence::Optional, "", "string", "environment variable that holds the connection string",
           [](ConfigReader& r, const YAML::Node& n, ConnectionConfig& c) {
             if (auto v = read_string(r, n)) {
               c.source = DsnSource::Environment;
               c.value = *v;
             }
           }},
          {"dsn_file", Presence::Optional, "", "string", "file whose content is the connection string",
           [](ConfigReader& r, const YAML::Node& n, ConnectionConfig& c) {
             if (auto v = read_string(r, n)) {
               c.source = DsnSource::File;
               c.value = *v;
             }
           }},
          {"primary", Presence::Optional, "", "connection name",
           "for a hot standby: the connection to its primary, where the safe horizon (open transactions) is read",
           into(&ConnectionConfig::primary, read_name)},
          {"replay_timeout", Presence::Optional, "60s", kDurationType,
           "for a standby with a primary: how long a run waits for the standby to replay up to the horizon",
           into(&ConnectionConfig::replay_timeout,
                [](ConfigReader& r, const YAML::Node& n) { return read_duration(r, n, std::chrono::seconds(1)); })},
      },
      [](ConfigReader& r, const YAML::Node& node, ConnectionConfig&) {
        const int given = node["dsn"].IsDefined() + node["dsn_env"].IsDefined() + node["dsn_file"].IsDefined();
        if (given != 1) r.error(node, "give exactly one of dsn, dsn_env or dsn_file");
      }};
  return schema;
}

const MapSchema<MetricsConfig>& metrics_schema() {
  static const MapSchema<MetricsConfig> schema{
      "metrics",
      {
          {"listen", Presence::Optional, "\"127.0.0.1:9464\"", "host:port",
           "address of the HTTP endpoint: /metrics, /healthz, /readyz",
           [](ConfigReader& r, const YAML::Node& n, MetricsConfig& m) {
             if (auto v = read_listen(r, n)) {
               m.listen = v->listen;
               m.host = v->host;
               m.port = v->port;
             }
           }},
          {"web_config", Presence::Optional, "", "path",
           "a Prometheus exporter web configuration file (tls_server_config, basic_auth_users), relative to this "
           "file: TLS and basic auth for all three paths (docs/operations.md, \"Scraping over TLS with a "
           "password\"); read at start and at each reload",
           [](ConfigReader& r, const YAML::Node& n, MetricsConfig& m) {
             if (auto v = read_string(r, n)) {
               m.web_config = *v;
               m.web_config_location = r.location(n);
             }
           }},
      },
      nullptr};
  return schema;
}

namespace {

// At most `limit` bytes of a value, quoted, for a message about it.
std::string quoted_prefix(const std::string& text, std::size_t limit = 40) {
  if (text.size() <= limit) return "\"" + text + "\"";
  return "\"" + text.substr(0, limit) + "\"...";
}

// A key of exporter-toolkit's format that tidemark does not implement:
// refused by name, saying what to do instead.
template <class Model>
KeySpec<Model> unsupported_key(std::string_view key, const char* advice) {
  return {key, Presence::Optional, "", "not supported", advice, [advice](ConfigReader& r, const YAML::Node& n, Model&) {
            r.error(n, std::string("not supported by tidemark: ") + advice);
          }};
}

template <class Model>
FieldReader<Model> into_path(WebConfigPath Model::*member) {
  return [member](ConfigReader& r, const YAML::Node& n, Model& model) {
    if (auto v = read_string(r, n)) model.*member = WebConfigPath{*v, r.location(n), r.path()};
  };
}

std::optional<TlsVersion> read_tls_version(ConfigReader& r, const YAML::Node& n) {
  if (n.IsScalar() && (n.Scalar() == "TLS10" || n.Scalar() == "TLS11")) {
    r.error(n, "TLS 1.0 and 1.1 are refused (deprecated, RFC 8996): use TLS12 or TLS13");
    return std::nullopt;
  }
  return read_enum<TlsVersion>(r, n, {{"TLS12", TlsVersion::Tls12}, {"TLS13", TlsVersion::Tls13}});
}

// Why `hash` is not a bcrypt hash as crypt(3) writes one: $2a$, $2b$ or
// $2y$, a two-digit cost from 04 to 31, $, then 53 characters of bcrypt's
// alphabet (22 of salt, 31 of hash). Nothing when it is one.
std::optional<std::string> bcrypt_hash_problem(const std::string& hash) {
  const std::string make_one = ": make one with htpasswd -nBC 10 \"\" | tr -d ':\\n' (docs/operations.md)";
  if (hash.size() < 4 || hash[0] != '$' || hash[1] != '2' || (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') ||
      hash[3] != '$') {
    return "is not a bcrypt hash (it starts $2y$, $2b$ or $2a$; a password is never written here in clear)" +
           make_one;
  }
  if (hash.size() != 60 || hash[6] != '$' || hash[4] < '0' || hash[4] > '9' || hash[5] < '0' || hash[5] > '9') {
    return "is not a whole bcrypt hash ($2y$, two digits of cost, $ and 53 characters: 60 in all)" + make_one;
  }
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return "has a bcrypt cost of " + std::to_string(cost) + "; it must be 04 to 31" + make_one;
  for (std::size_t i = 7; i < hash.size(); ++i) {
    const char c = hash[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/';
    if (!ok) return "holds a character bcrypt never writes, at position " + std::to_string(i + 1) + make_one;
  }
  return std::nullopt;
}

void read_basic_auth_users(ConfigReader& r, const YAML::Node& node, WebConfig& w) {
  constexpr std::size_t kMaxUserName = 128;
  r.read_entries(node, [&](const std::string& name, const YAML::Node& key_node, const YAML::Node& value) {
    const bool control = std::any_of(name.begin(), name.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (name.empty() || name.size() > kMaxUserName || name.find(':') != std::string::npos || control) {
      r.error(key_node, "user name " + quoted_prefix(name) + " cannot be used: basic auth takes 1 to " +
                            std::to_string(kMaxUserName) + " characters without a colon or control characters");
      return;
    }
    ConfigReader::Scope scope(r, name);
    auto hash = read_string(r, value);
    if (!hash) return;
    if (const auto problem = bcrypt_hash_problem(*hash)) {
      r.error(value, "the password hash of " + quoted_prefix(name) + " " + *problem);
      return;
    }
    w.users.push_back({name, *hash});
  });
}

}  // namespace

const MapSchema<TlsServerConfig>& tls_server_config_schema() {
  constexpr const char* kFilesOnly = "give the file with cert_file, key_file or client_ca_file";
  static const MapSchema<TlsServerConfig> schema{
      "web_config: tls_server_config",
      {
          {"cert_file", Presence::Required, "", "path",
           "the server's certificate (PEM; a chain, the server's first), relative to the web configuration file",
           into_path(&TlsServerConfig::cert_file)},
          {"key_file", Presence::Required, "", "path", "its private key (PEM, unencrypted)",
           into_path(&TlsServerConfig::key_file)},
          {"client_auth_type", Presence::Optional, "NoClientCert",
           "NoClientCert | VerifyClientCertIfGiven | RequireAndVerifyClientCert",
           "whether scrapers must show a certificate signed by client_ca_file",
           into(&TlsServerConfig::client_auth, [](ConfigReader& r, const YAML::Node& n) -> std::optional<ClientAuth> {
             if (n.IsScalar() && (n.Scalar() == "RequestClientCert" || n.Scalar() == "RequireAnyClientCert")) {
               r.error(n, n.Scalar() +
                              " accepts any certificate without checking it: use RequireAndVerifyClientCert "
                              "with client_ca_file");
               return std::nullopt;
             }
             return read_enum<ClientAuth>(r, n,
                                          {{"NoClientCert", ClientAuth::NoClientCert},
                                           {"VerifyClientCertIfGiven", ClientAuth::VerifyClientCertIfGiven},
                                           {"RequireAndVerifyClientCert", ClientAuth::RequireAndVerifyClientCert}});
           })},
          {"client_ca_file", Presence::Optional, "", "path",
           "the CA certificates (PEM) that scrapers' certificates are checked against; with a Verify* "
           "client_auth_type only",
           [](ConfigReader& r, const YAML::Node& n, TlsServerConfig& t) {
             if (auto v = read_string(r, n)) t.client_ca_file = WebConfigPath{*v, r.location(n), r.path()};
           }},
          {"min_version", Presence::Optional, "TLS12", "TLS12 | TLS13", "the oldest TLS version accepted",
           into(&TlsServerConfig::min_version, read_tls_version)},
          {"max_version", Presence::Optional, "TLS13", "TLS12 | TLS13", "the newest TLS version accepted",
           into(&TlsServerConfig::max_version, read_tls_version)},
          unsupported_key<TlsServerConfig>("cert", kFilesOnly),
          unsupported_key<TlsServerConfig>("key", kFilesOnly),
          unsupported_key<TlsServerConfig>("client_ca", kFilesOnly),
          unsupported_key<TlsServerConfig>("client_allowed_sans", "any certificate client_ca_file signed is accepted; sign only the "
                                          "scrapers' certificates with that CA"),
          unsupported_key<TlsServerConfig>("cipher_suites", "OpenSSL's default suites are used; raise min_version to TLS13 to narrow them"),
          unsupported_key<TlsServerConfig>("prefer_server_cipher_suites", "OpenSSL's defaults are used; remove the key"),
          unsupported_key<TlsServerConfig>("curve_preferences", "OpenSSL's default groups are used; remove the key"),
      },
      [](ConfigReader& r, const YAML::Node& node, TlsServerConfig& t) {
        const bool verifies = t.client_auth != ClientAuth::NoClientCert;
        if (verifies && !t.client_ca_file) {
          ConfigReader::Scope scope(r, "client_auth_type");
          r.error(node["client_auth_type"], "a Verify* client_auth_type needs client_ca_file: the CA that signs the "
                                            "scrapers' certificates");
        }
        if (!verifies && t.client_ca_file) {
          ConfigReader::Scope scope(r, "client_ca_file");
          r.error(node["client_ca_file"], "client_ca_file is used only with client_auth_type "
                                          "RequireAndVerifyClientCert (or VerifyClientCertIfGiven): set one, or "
                                          "remove client_ca_file");
        }
        if (t.min_version == TlsVersion::Tls13 && t.max_version == TlsVersion::Tls12 &&
            node["max_version"].IsDefined()) {
          ConfigReader::Scope scope(r, "max_version");
          r.error(node["max_version"], "is below min_version: no TLS version would be left");
        }
      }};
  return schema;
}

const MapSchema<WebConfig>& web_config_schema() {
  static const MapSchema<WebConfig> schema{
      "web_config",
      {
          {"tls_server_config", Presence::Optional, "", "map",
           "serve HTTPS with this certificate; absent: plain HTTP",
           [](ConfigReader& r, const YAML::Node& n, WebConfig& w) {
             TlsServerConfig tls;
             const std::size_t before = r.error_count();
             r.read_map(n, tls_server_config_schema(), tls);
             if (r.error_count() == before) w.tls = std::move(tls);
           }},
          {"basic_auth_users", Presence::Optional, "", "map of user name to bcrypt hash",
           "every path asks for one of these users and its password (basic auth); absent: none asked",
           read_basic_auth_users},
          unsupported_key<WebConfig>("http_server_config", "tidemark speaks HTTP/1.1 and sets no extra headers; remove the key"),
          unsupported_key<WebConfig>("rate_limit", "remove the key; a proxy in front can limit requests"),
      },
      [](ConfigReader& r, const YAML::Node& node, WebConfig&) {
        if (node.IsMap() && !node["tls_server_config"].IsDefined() && !node["basic_auth_users"].IsDefined()) {
          r.error(node, "neither tls_server_config nor basic_auth_users: give one of them, or remove "
                        "metrics.web_config from the daemon file");
        }
      }};
  return schema;
}

const MapSchema<LogConfig>& log_schema() {
  static const MapSchema<LogConfig> schema{
      "log",
      {
          {"level", Presence::Optional, "info", "trace | debug | info | warn | error | off", "least severe level logged",
           into(&LogConfig::level, [](ConfigReader& r, const YAML::Node& n) {
             return read_enum<LogLevel>(r, n,
                                        {{"trace", LogLevel::Trace},
                                         {"debug", LogLevel::Debug},
                                         {"info", LogLevel::Info},
                                         {"warn", LogLevel::Warn},
                                         {"error", LogLevel::Error},
                                         {"off", LogLevel::Off}});
           })},
          {"format", Presence::Optional, "text", "text | json", "one line of text, or one JSON object, per event",
           into(&LogConfig::format, [](ConfigReader& r, const YAML::Node& n) {
             return read_enum<LogFormat>(r, n, {{"text", LogFormat::Text}, {"json", LogFormat::Json}});
           })},
      },
      nullptr};
  return schema;
}

const MapSchema<HistoryConfig>& history_schema() {
  static const MapSchema<HistoryConfig> schema{
      "history",
      {
          {"retention", Presence::Optional, "30d", "duration, 1h or more: 30s, 15m, 2h, 1d",
           "run rows that started longer ago are pruned, except each table's last success, its current "
           "failure streak and the last run of each kind",
           into(&HistoryConfig::retention,
                [](ConfigReader& r, const YAML::Node& n) { return read_duration(r, n, std::chrono::seconds(3600)); })},
      },
      nullptr};
  return schema;
}

const MapSchema<FleetConfig>& fleet_schema() {
  static const MapSchema<FleetConfig> schema{
      "fleet",
      {
          {"lease", Presence::Optional, "6s", "duration, 3s to 5m",
           "how long a member keeps its tables without renewing its registration; a member that dies loses its "
           "tables to the others within about this long",
           [](ConfigReader& r, const YAML::Node& n, FleetConfig& f) {
             const auto lease = read_duration(r, n, std::chrono::seconds(3));
             if (lease && *lease > std::chrono::seconds(300)) {
               r.error(n, "must be at most 5m, got \"" + n.Scalar() + "\": a dead member's tables wait this long");
             } else if (lease) {
               f.lease = *lease;
             }
           }},
          {"expect_members", Presence::Optional, "", "integer 1..1000",
           "how many members the fleet should have: tidemark_fleet_members below it raises an alert",
           [](ConfigReader& r, const YAML::Node& n, FleetConfig& f) {
             if (auto v = read_integer(r, n, 1, 1000)) f.expect_members = static_cast<int>(*v);
           }},
      },
      nullptr};
  return schema;
}

const MapSchema<DaemonConfig>& daemon_schema() {
  static const MapSchema<DaemonConfig> schema{
      "tidemark.yaml",
      {
          {"state", Presence::Required, "", "connection name", "connection that holds the tidemark schema",
           into(&DaemonConfig::state, read_name)},
          {"connections", Presence::Required, "", "map of name to connection", "the databases, by name",
           [](ConfigReader& r, const YAML::Node& n, DaemonConfig& d) {
             r.read_named_entries(n, [&](const std::string& name, const YAML::Node& value) {
               ConnectionConfig c;
               c.name = name;
               r.read_map(value, connection_schema(), c);
               d.connections.push_back(std::move(c));
             });
           }},
          {"pipelines_dir", Presence::Optional, "pipelines", "path",
           "folder of pipeline files (*.yaml), relative to this file", into(&DaemonConfig::pipelines_dir, read_string)},
          {"metrics", Presence::Optional, "{}", "map", "Prometheus endpoint",
           [](ConfigReader& r, const YAML::Node& n, DaemonConfig& d) { r.read_map(n, metrics_schema(), d.metrics); }},
          {"max_concurrent_runs", Presence::Optional, "4", "integer 1..256", "global bound on runs in flight",
           [](ConfigReader& r, const YAML::Node& n, DaemonConfig& d) {
             if (auto v = read_integer(r, n, 1, 256)) d.max_concurrent_runs = static_cast<int>(*v);
           }},
          {"shutdown_grace", Presence::Optional, "30s", kDurationType,
           "on SIGTERM, how long runs in flight may finish before they are cancelled",
           into(&DaemonConfig::shutdown_grace,
                [](ConfigReader& r, const YAML::Node& n) { return read_duration(r, n, std::chrono::seconds(0)); })},
          {"log", Presence::Optional, "{}", "map", "logging",
           [](ConfigReader& r, const YAML::Node& n, DaemonConfig& d) { r.read_map(n, log_schema(), d.log); }},
          {"history", Presence::Optional, "{}", "map", "the run history (tidemark.runs)",
           [](ConfigReader& r, const YAML::Node& n, DaemonConfig& d) {
             r.read_map(n, history_schema(), d.history);
           }},
          {"fleet", Presence::Optional, "{}", "map", "how replicas of the daemon share the tables (tidemark.members)",
           [](ConfigReader& r, const YAML::Node& n, DaemonConfig& d) { r.read_map(n, fleet_schema(), d.fleet); }},
      },
      [](ConfigReader& r, const YAML::Node& node, DaemonConfig& d) {
        if (!d.state.empty() && !d.connections.empty() && d.find_connection(d.state) == nullptr) {
          ConfigReader::Scope scope(r, "state");
          r.error(node["state"], "no connection named \"" + d.state + "\" in connections");
        }
        for (const ConnectionConfig& c : d.connections) {
          if (c.primary.empty()) continue;
          const ConnectionConfig* primary = d.find_connection(c.primary);
          const char* problem = primary == nullptr        ? "names no connection in connections"
                                : primary == &c           ? "names the connection itself"
                                : !primary->primary.empty() ? "names a connection that has a primary of its own"
                                                          : nullptr;
          if (problem == nullptr) continue;
          ConfigReader::Scope connections(r, "connections");
          ConfigReader::Scope entry(r, c.name);
          ConfigReader::Scope scope(r, "primary");
          r.error(node["connections"][c.name]["primary"],
                  "primary \"" + c.primary + "\" " + problem + "; give the connection to the standby's primary");
        }
      }};
  return schema;
}

const MapSchema<PartitionSpec>& partition_schema() {
  static const MapSchema<PartitionSpec> schema{
      "tables[].partition",
      {
          {"column", Presence::Required, "", "column", "target column that holds the partition's time",
           into(&PartitionSpec::column, read_column)},
          {"unit", Presence::Optional, "day", "hour | day | month",
           "partition length, in the pipeline's time zone",
           into(&PartitionSpec::unit, [](ConfigReader& r, const YAML::Node& n) {
             return read_enum<PartitionUnit>(
                 r, n, {{"hour", PartitionUnit::Hour}, {"day", PartitionUnit::Day}, {"month", PartitionUnit::Month}});
           })},
      },
      nullptr};
  return schema;
}

const MapSchema<LoadRanges>& ranges_schema() {
  static const MapSchema<LoadRanges> schema{
      "ranges",
      {
          {"above", Presence::Optional, "1GB", kByteSizeType,
           "a first load of a source table at least this big (heap and TOAST, as pg_table_size counts) is read in "
           "ranges of its pages, each committed by itself, so that a failed load resumes where it stopped; 0B: "
           "every first load",
           into(&LoadRanges::above, [](ConfigReader& r, const YAML::Node& n) { return read_byte_size(r, n, 0); })},
          {"size", Presence::Optional, "256MB", kByteSizeType,
           "about how much of the table one range reads (at least 8kB, one page)",
           into(&LoadRanges::size, [](ConfigReader& r, const YAML::Node& n) { return read_byte_size(r, n, 8192); })},
          {"workers", Presence::Optional, "2", "integer 1..32",
           "how many ranges are read at once, each on sessions of its own to the source and the target under the "
           "one snapshot; the workers beyond the first take free places of daemon.max_concurrent_runs, so a load "
           "may get fewer",
           [](ConfigReader& r, const YAML::Node& n, LoadRanges& l) {
             if (auto v = read_integer(r, n, 1, 32)) l.workers = static_cast<int>(*v);
           }},
      },
      nullptr};
  return schema;
}

const MapSchema<DeletesConfig>& deletes_schema() {
  static const MapSchema<DeletesConfig> schema{
      "tables[].deletes",
      {
          {"reconcile", Presence::Required, "", "cron expression",
           "when reconcile compares the key sets of source and target (also: tidemark reconcile)",
           into(&DeletesConfig::reconcile, read_schedule)},
          {"action", Presence::Optional, "delete", "delete | mark",
           "what happens to a target row whose key left the source",
           into(&DeletesConfig::action, [](ConfigReader& r, const YAML::Node& n) {
             return read_enum<DeleteAction>(r, n, {{"delete", DeleteAction::Delete}, {"mark", DeleteAction::Mark}});
           })},
          {"mark_column", Presence::Optional, "", "column",
           "action mark (required): a timestamptz target column set when the row's key leaves the source",
           into(&DeletesConfig::mark_column, read_column)},
      },
      [](ConfigReader& r, const YAML::Node& node, DeletesConfig& d) {
        if (d.action == DeleteAction::Mark && d.mark_column.empty() && !node["mark_column"].IsDefined()) {
          r.error(node, "missing required key \"mark_column\": action mark sets a timestamptz target column");
        }
        if (d.action == DeleteAction::Delete && node["mark_column"].IsDefined()) {
          ConfigReader::Scope scope(r, "mark_column");
          r.error(node["mark_column"], "only for action: mark (action delete removes the row)");
        }
      }};
  return schema;
}

const MapSchema<TableConfig>& table_schema() {
  static const MapSchema<TableConfig> schema{
      "tables[]",
      {
          {"name", Presence::Required, "", "name", "unique within the pipeline; the state key is (pipeline, name)",
           [](ConfigReader& r, const YAML::Node& n, TableConfig& t) {
             if (auto v = read_name(r, n)) {
               t.name = *v;
               t.location = r.location(n);
             }
           }},
          {"mode", Presence::Optional, table_mode_name(TableMode::Incremental), table_mode_names(),
           table_mode_meaning(),
           [](ConfigReader& r, const YAML::Node& n, TableConfig& t) {
             t.mode_location = r.location(n);
             t.mode_key_path = r.path();
             if (auto v = read_table_mode(r, n)) t.mode = *v;
           }},
          {"source_table", Presence::Optional, "", "table name",
           table_key_meaning("source_table", "the table read, e.g. public.orders"),
           into(&TableConfig::source_table, read_table_name)},
          {"target_table", Presence::Required, "", "table name",
           "the table written; it must exist (several tables may share one)",
           into(&TableConfig::target_table, read_table_name)},
          {"columns", Presence::Optional, "", "list of columns",
           table_key_meaning("columns", "columns copied; default every source column"),
           into(&TableConfig::columns, read_column_list)},
          {"on_schema_change", Presence::Optional, "fail", "fail | append_new_columns",
           table_key_meaning("on_schema_change",
                             "when the source's columns change, fail the run before it writes, or add new "
                             "source columns to the target (nullable) and load them; dropped or retyped columns "
                             "fail either way"),
           into(&TableConfig::on_schema_change, [](ConfigReader& r, const YAML::Node& n) {
             return read_enum<SchemaChangePolicy>(
                 r, n, {{"fail", SchemaChangePolicy::Fail}, {"append_new_columns", SchemaChangePolicy::AppendNewColumns}});
           })},
          {"key", Presence::Optional, "", "list of columns",
           table_key_meaning("key", "the upsert key, which a snapshot also matches deletes on; a snapshot table "
                                    "without one is made equal to its source as a multiset (identical rows counted)"),
           into(&TableConfig::key, read_column_list)},
          {"cursor", Presence::Optional, "", "column",
           table_key_meaning("cursor", "timestamptz, timestamp, date or integer column"),
           into(&TableConfig::cursor, read_column)},
          {"lookback", Presence::Optional, "0s", "duration, or a count for integer cursors",
           table_key_meaning("lookback",
                             "re-read this far below the watermark every run; a partition table checks again the "
                             "done partitions that start this far before the newest complete one, and rewrites "
                             "those that differ from their query (0s, or at least 1h, 1d or 31d, by its unit)"),
           into(&TableConfig::lookback, [](ConfigReader& r, const YAML::Node& n) { return read_cursor_span(r, n, true); })},
          {"max_window", Presence::Optional, "", "positive duration, or a count for integer cursors",
           table_key_meaning("max_window", "split a longer window into chunks, each committed on its own"),
           into(&TableConfig::max_window,
                [](ConfigReader& r, const YAML::Node& n) { return read_cursor_span(r, n, false); })},
          {"initial", Presence::Optional, "", "ISO-8601 date/timestamp or integer",
           table_key_meaning("initial", "watermark (or first partition) when none is stored; default: full history"),
           into(&TableConfig::initial, read_cursor_literal)},
          {"schedule", Presence::Optional, "", "cron expression", "overrides the pipeline's schedule",
           into(&TableConfig::schedule, read_schedule)},
          {"stale_after", Presence::Optional, "", kDurationType,
           "overrides the pipeline's stale_after (a daily partition table is a day behind by design)",
           into(&TableConfig::stale_after, [](ConfigReader& r, const YAML::Node& n) {
             return read_duration(r, n, std::chrono::seconds(1));
           })},
          {"partition", Presence::Optional, "", "map", table_key_meaning("partition", "{column, unit}"),
           [](ConfigReader& r, const YAML::Node& n, TableConfig& t) {
             PartitionSpec p;
             r.read_map(n, partition_schema(), p);
             t.partition = p;
           }},
          {"query", Presence::Optional, "", "SQL",
           table_key_meaning("query", "rows of one partition; $1 = lo, $2 = hi"),
           into(&TableConfig::query, read_string)},
          {"create_target", Presence::Optional, "", "true | false",
           table_key_meaning("create_target",
                             "the first run creates the target table when it is missing (schema, the source's "
                             "columns and types in order, NOT NULL, a primary key on key if there is one; nothing else), in the "
                             "transaction of its first write; default: the pipeline's create_target"),
           [](ConfigReader& r, const YAML::Node& n, TableConfig& t) {
             if (const auto v = read_bool(r, n)) {
               t.create_target = *v;
               t.create_target_set = true;
             }
           }},
          {"ranges", Presence::Optional, "", "map",
           table_key_meaning("ranges",
                             "{above, size, workers}: how a big first load is split into ranges it can resume from; a "
                             "key left out is the pipeline's"),
           [](ConfigReader& r, const YAML::Node& n, TableConfig& t) {
             r.read_map(n, ranges_schema(), t.ranges);
             t.ranges_above_set = n.IsMap() && n["above"].IsDefined();
             t.ranges_size_set = n.IsMap() && n["size"].IsDefined();
             t.ranges_workers_set = n.IsMap() && n["workers"].IsDefined();
           }},
          {"deletes", Presence::Optional, "", "map",
           table_key_meaning("deletes",
                             "{reconcile, action, mark_column}: rows deleted in the source leave the target; a "
                             "partition table's scheduled reconcile rewrites every done partition that differs "
                             "from its query"),
           [](ConfigReader& r, const YAML::Node& n, TableConfig& t) {
             DeletesConfig d;
             d.location = r.location(n);
             d.key_path = r.path();
             r.read_map(n, deletes_schema(), d);
             t.deletes = d;
           }},
          {"inputs", Presence::Optional, "", "list of pipeline.table",
           table_key_meaning("inputs",
                             "tables of this configuration whose targets this table's source reads: its safe "
                             "horizon never passes their watermarks (a partition input: the end of its done "
                             "partitions), and each of their runs that moves wakes it"),
           read_inputs},
      },
      check_table};
  return schema;
}

const MapSchema<PipelineConfig>& pipeline_schema() {
  static const MapSchema<PipelineConfig> schema{
      "pipeline file",
      {
          {"pipeline", Presence::Required, "", "name", "unique across all pipeline files",
           [](ConfigReader& r, const YAML::Node& n, PipelineConfig& p) {
             if (auto v = read_name(r, n)) {
               p.name = *v;
               p.location = r.location(n);
             }
           }},
          {"source", Presence::Required, "", "connection name", "database read", into(&PipelineConfig::source, read_name)},
          {"target", Presence::Required, "", "connection name", "database written",
           into(&PipelineConfig::target, read_name)},
          {"schedule", Presence::Optional, "", "cron expression",
           "default schedule of the tables: 5 fields, 6 with seconds, or @hourly, @daily, ...",
           into(&PipelineConfig::schedule, read_schedule)},
          {"timezone", Presence::Optional, "UTC", "IANA time zone", "zone of the schedule and of partition boundaries",
           read_timezone},
          {"stale_after", Presence::Optional, "1d", kDurationType,
           "a watermark older than this is stale (metric and alert)",
           into(&PipelineConfig::stale_after, [](ConfigReader& r, const YAML::Node& n) {
             return read_duration(r, n, std::chrono::seconds(1));
           })},
          {"create_target", Presence::Optional, "false", "true | false",
           "the default of create_target for its " + key_modes_text("create_target") + " tables",
           into(&PipelineConfig::create_target, read_bool)},
          {"ranges", Presence::Optional, "", "map",
           "{above, size, workers}: the default of ranges for its " + key_modes_text("ranges") + " tables",
           [](ConfigReader& r, const YAML::Node& n, PipelineConfig& p) { r.read_map(n, ranges_schema(), p.ranges); }},
          {"tables", Presence::Required, "", "list of 1 to 10000 tables", "the tables of this pipeline",
           [](ConfigReader& r, const YAML::Node& n, PipelineConfig& p) {
             if (n.IsSequence() && n.size() > kMaxTablesPerPipeline) {
               r.error(n, std::to_string(n.size()) + " tables; a pipeline holds at most " +
                              std::to_string(kMaxTablesPerPipeline) + ": split it into several pipeline files");
               return;
             }
             r.read_list(n, [&](const YAML::Node& item) {
               TableConfig t;
               r.read_map(item, table_schema(), t);
               p.tables.push_back(std::move(t));
             });
           }},
      },
      [](ConfigReader& r, const YAML::Node& node, PipelineConfig& p) {
        const YAML::Node tables = node["tables"];
        std::set<std::string> names;
        for (std::size_t i = 0; i < p.tables.size() && tables.IsSequence() && i < tables.size(); ++i) {
          TableConfig& t = p.tables[i];
          ConfigReader::Scope scope(r, "tables[" + std::to_string(i) + "]");
          if (!t.name.empty() && !names.insert(t.name).second) {
            ConfigReader::Scope name_scope(r, "name");
            r.error(tables[i]["name"], "duplicate table name \"" + t.name + "\" in pipeline");
          }
          if (!t.schedule) {
            // An invalid schedule was reported where it was written.
            // A table that is not a map was reported as such already.
            if (!p.schedule && !node["schedule"].IsDefined() && tables[i].IsMap() &&
                !tables[i]["schedule"].IsDefined()) {
              r.error(tables[i], "no schedule: set schedule on the table or on the pipeline");
            }
            t.schedule = p.schedule;
          }
          if (t.stale_after.count() == 0) t.stale_after = p.stale_after;
          if (!t.create_target_set && takes_key(t.mode, "create_target")) t.create_target = p.create_target;
          if (!t.ranges_above_set) t.ranges.above = p.ranges.above;
          if (!t.ranges_size_set) t.ranges.size = p.ranges.size;
          if (!t.ranges_workers_set) t.ranges.workers = p.ranges.workers;
        }
      }};
  return schema;
}

namespace {

template <class Model>
void render_map(std::string& out, const MapSchema<Model>& schema) {
  out += "### `" + std::string(schema.name) + "`\n\n";
  out += "| key | type | required | default | meaning |\n|---|---|---|---|---|\n";
  for (const auto& k : schema.keys) {
    out += "| `" + std::string(k.key) + "` | " + std::string(k.type) + " | " +
           (k.presence == Presence::Required ? "yes" : "no") + " | " +
           (k.default_yaml.empty() ? "" : "`" + std::string(k.default_yaml) + "`") + " | " +
           std::string(k.description) + " |\n";
  }
  out += "\n";
}

}  // namespace

std::string render_schema_reference() {
  std::string out;
  render_map(out, daemon_schema());
  render_map(out, connection_schema());
  render_map(out, metrics_schema());
  render_map(out, web_config_schema());
  render_map(out, tls_server_config_schema());
  render_map(out, log_schema());
  render_map(out, pipeline_schema());
  render_map(out, table_schema());
  render_map(out, partition_schema());
  render_map(out, deletes_schema());
  render_map(out, ranges_schema());
  return out;
}

}  // namespace tidemark
