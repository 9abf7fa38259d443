#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config/config_schema.h"
#include "daemon/commands/validate_command.h"
#include "daemon/config_loader.h"
#include "daemon/pg/libpq/dsn_resolver.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

const std::string kExampleConfig = std::string(TIDEMARK_SOURCE_DIR) + "/config/tidemark.yaml";

// A scratch folder removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/tidemark-test-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name) << text;
  }
};

}  // namespace

TEST_CASE("the example configuration under config/ is valid") {
  const auto loaded = load_config(kExampleConfig);
  for (const auto& e : loaded.errors) MESSAGE(e.to_string());
  REQUIRE(loaded.value);
  CHECK(loaded.value->pipelines.size() >= 2);
  const PipelineConfig* orders = loaded.value->find_pipeline("shop_orders");
  REQUIRE(orders);
  CHECK(orders->timezone == "Europe/Berlin");
  REQUIRE(orders->find_table("daily_revenue"));
  CHECK(orders->find_table("daily_revenue")->mode == TableMode::Partition);
  REQUIRE(orders->find_table("orders"));
  REQUIRE(orders->find_table("orders")->deletes);
  CHECK(orders->find_table("orders")->deletes->action == DeleteAction::Delete);
  const PipelineConfig* marts = loaded.value->find_pipeline("marts");
  REQUIRE(marts);
  REQUIRE(marts->find_table("customer_revenue"));
  REQUIRE(marts->find_table("customer_revenue")->inputs.size() == 1);
  CHECK(marts->find_table("customer_revenue")->inputs[0].display() == "shop_orders.orders");
  CHECK(orders->find_table("orders")->dependents.size() == 1);
}

TEST_CASE("pipelines_dir is relative to the daemon file and only *.yaml is read") {
  TempDir dir;
  dir.write("etc/tidemark.yaml", "state: w\nconnections: { w: { dsn: \"dbname=w password=secret\" } }\npipelines_dir: p\n");
  dir.write("etc/p/a.yaml", "pipeline: a\nsource: w\ntarget: w\nschedule: '@daily'\ntables:\n"
                            "  - {name: t, source_table: s.t, target_table: r.t, key: [id], cursor: id}\n");
  dir.write("etc/p/notes.txt", "not yaml: [");
  dir.write("etc/p/b.yaml.bak", "not yaml: [");
  const auto loaded = load_config((dir.path / "etc/tidemark.yaml").string());
  REQUIRE(loaded.value);
  REQUIRE(loaded.value->pipelines.size() == 1);
  CHECK(loaded.value->pipelines[0].location.file == (dir.path / "etc/p/a.yaml").string());
}

TEST_CASE("a missing daemon file or pipelines_dir is an error naming the path") {
  TempDir dir;
  auto loaded = load_config((dir.path / "nope.yaml").string());
  REQUIRE(loaded.errors.size() == 1);
  CHECK(loaded.errors[0].file == (dir.path / "nope.yaml").string());
  CHECK(loaded.errors[0].message.find("cannot read file") != std::string::npos);

  dir.write("t.yaml", "state: w\nconnections: { w: { dsn: x } }\npipelines_dir: missing\n");
  loaded = load_config((dir.path / "t.yaml").string());
  REQUIRE(loaded.errors.size() == 1);
  CHECK(loaded.errors[0].message.find("cannot list pipelines_dir") != std::string::npos);
}

TEST_CASE("validate prints errors and exits 2, or a summary without passwords and exits 0") {
  TempDir dir;
  dir.write("t.yaml", "state: w\nconnections: { w: { dsn: \"host=db password=hunter2\" } }\npipelines_dir: p\n");
  dir.write("p/.keep", "");
  ValidateOptions cl;
  cl.config_path = (dir.path / "t.yaml").string();
  std::ostringstream out, err;
  CHECK(run_validate(cl, Instant{}, out, err) == 0);
  CHECK(out.str().find("password=****") != std::string::npos);
  CHECK(out.str().find("hunter2") == std::string::npos);

  dir.write("p/bad.yaml", "pipeline: b\nsource: w\ntarget: nowhere\nschedule: '@daily'\ntables: []\n");
  std::ostringstream out2, err2;
  CHECK(run_validate(cl, Instant{}, out2, err2) == 2);
  CHECK(err2.str().find("bad.yaml:3:9: target: no connection named \"nowhere\"") != std::string::npos);
  CHECK(err2.str().find("bad.yaml:5:9: tables: expected a non-empty list") != std::string::npos);
  CHECK(err2.str().find("2 errors found") != std::string::npos);
}

TEST_CASE("docs/configuration.md carries the current schema reference") {
  std::ifstream in(std::string(TIDEMARK_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  // Regenerate with scripts/update-config-docs.
  CHECK(text.str().find(render_schema_reference()) != std::string::npos);
}

ConnectionConfig dsn_from(std::string name, DsnSource source, std::string value) {
  ConnectionConfig c;
  c.name = std::move(name);
  c.source = source;
  c.value = std::move(value);
  return c;
}

TEST_CASE("DSNs come inline, from the environment, or from a file next to the daemon file") {
  TempDir dir;
  dir.write("secrets/shop.dsn", "host=db password=hunter2\n");
  ConnectionConfig file = dsn_from("shop", DsnSource::File, "secrets/shop.dsn");
  CHECK(resolve_dsn(file, dir.path.string()) == "host=db password=hunter2");
  file.value = (dir.path / "secrets/shop.dsn").string();  // absolute
  CHECK(resolve_dsn(file, "/nonexistent") == "host=db password=hunter2");

  ::setenv("TIDEMARK_TEST_DSN", "dbname=x", 1);
  CHECK(resolve_dsn(dsn_from("w", DsnSource::Environment, "TIDEMARK_TEST_DSN"), "") == "dbname=x");
  ::unsetenv("TIDEMARK_TEST_DSN");
  try {
    resolve_dsn(dsn_from("w", DsnSource::Environment, "TIDEMARK_TEST_DSN"), "");
    FAIL("an unset variable must be an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "connection w: environment variable TIDEMARK_TEST_DSN is not set");
  }
  CHECK(resolve_dsn(dsn_from("w", DsnSource::Inline, "dbname=y"), "") == "dbname=y");
  CHECK_THROWS_AS(resolve_dsn(dsn_from("w", DsnSource::File, "missing.dsn"), dir.path.string()), std::runtime_error);
}

// Issue 10, item 4: /dev/zero was read until memory ran out, a FIFO blocked
// forever, and an empty file gave "cannot read dsn_file".
TEST_CASE("regression: dsn_file reads only a small regular file and says which file and why") {
  TempDir dir;
  const auto error_of = [&](const std::string& file) {
    try {
      resolve_dsn(dsn_from("shop", DsnSource::File, file), dir.path.string());
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string prefix = "connection shop: dsn_file ";
  CHECK(error_of("/dev/zero") == prefix + "/dev/zero is a character device: point dsn_file at a regular file holding "
                                          "the DSN on its first line");
  REQUIRE(::mkfifo((dir.path / "fifo").c_str(), 0600) == 0);
  CHECK(error_of("fifo") == prefix + (dir.path / "fifo").string() +
                                " is a FIFO: point dsn_file at a regular file holding the DSN on its first line");
  fs::create_directories(dir.path / "folder");
  CHECK(error_of("folder").find(" is a folder: ") != std::string::npos);
  dir.write("empty.dsn", "");
  CHECK(error_of("empty.dsn") == prefix + (dir.path / "empty.dsn").string() + " is empty: write the DSN on its first line");
  dir.write("blank.dsn", "\nhost=db\n");
  CHECK(error_of("blank.dsn").find("its first line is empty") != std::string::npos);
  dir.write("big.dsn", "host=db\n" + std::string(kMaxDsnFileBytes, '#'));
  CHECK(error_of("big.dsn").find("allowed: it should hold one line, the DSN") != std::string::npos);
  dir.write("limit.dsn", "host=db " + std::string(kMaxDsnFileBytes - 9, 'x') + "\n");
  CHECK(error_of("limit.dsn") == "no error");
  CHECK(error_of("missing.dsn") ==
        prefix + (dir.path / "missing.dsn").string() + " cannot be opened: No such file or directory");
}

}  // namespace tidemark

namespace tidemark {

std::string all_errors(const ParseOutcome<Config>& loaded) {
  std::string out;
  for (const ConfigError& e : loaded.errors) out += e.to_string() + "\n";
  return out;
}

// Issue 10, item 1: a dangling *.yaml symlink and a folder named x.yaml in
// pipelines_dir were skipped without a word; errors in the daemon file
// stopped the pipeline files from being checked.
TEST_CASE("regression: every *.yaml in pipelines_dir is read or reported, and daemon errors do not hide pipeline ones") {
  TempDir dir;
  dir.write("t.yaml", "state: w\nconnections: { w: { dsn: x } }\npipelines_dir: p\n");
  dir.write("p/a.yaml", "pipeline: a\nsource: w\ntarget: w\nschedule: '@daily'\ntables:\n"
                        "  - {name: t, source_table: s.t, target_table: r.t, key: [id], cursor: id}\n");
  fs::create_symlink(dir.path / "p/gone.yaml.orig", dir.path / "p/b.yaml");
  fs::create_directories(dir.path / "p/c.yaml");
  auto loaded = load_config((dir.path / "t.yaml").string());
  const std::string errors = all_errors(loaded);
  INFO(errors);
  CHECK_FALSE(loaded.value);
  REQUIRE(loaded.errors.size() == 2);
  CHECK(loaded.errors[0].file == (dir.path / "p/b.yaml").string());
  CHECK(loaded.errors[0].message.find("is a symlink to " + (dir.path / "p/gone.yaml.orig").string() +
                                      ", which does not exist") == 0);
  CHECK(loaded.errors[1].file == (dir.path / "p/c.yaml").string());
  CHECK(loaded.errors[1].message.find("is a folder, not a pipeline file") == 0);

  fs::remove(dir.path / "p/b.yaml");
  fs::remove(dir.path / "p/c.yaml");
  dir.write("t.yaml", "state: w\nconnections: { w: { dsn: x } }\npipelines_dir: p\nmax_concurrent_runs: many\n");
  dir.write("p/z.yaml", "pipeline: z\nsource: w\ntarget: w\nschedule: 'every day'\ntables: []\n");
  loaded = load_config((dir.path / "t.yaml").string());
  const std::string both = all_errors(loaded);
  INFO(both);
  CHECK(both.find("t.yaml:4:22: max_concurrent_runs:") != std::string::npos);
  CHECK(both.find("z.yaml:4:11: schedule:") != std::string::npos);
  CHECK(both.find("z.yaml:5:9: tables:") != std::string::npos);
  CHECK(loaded.errors.size() == 3);
}

// Issue 10, item 6: --config naming a folder said "expected a map of keys,
// got nothing".
TEST_CASE("regression: --config naming a folder, a FIFO or a huge file says so") {
  TempDir dir;
  auto loaded = load_config(dir.path.string());
  REQUIRE(loaded.errors.size() == 1);
  CHECK(loaded.errors[0].message.find("is a folder, not a YAML file") == 0);
  REQUIRE(::mkfifo((dir.path / "fifo.yaml").c_str(), 0600) == 0);
  loaded = load_config((dir.path / "fifo.yaml").string());
  REQUIRE(loaded.errors.size() == 1);
  CHECK(loaded.errors[0].message.find("is a FIFO, not a YAML file") == 0);
  dir.write("big.yaml", "# " + std::string(kMaxConfigFileBytes, 'x') + "\n");
  loaded = load_config((dir.path / "big.yaml").string());
  REQUIRE(loaded.errors.size() == 1);
  CHECK(loaded.errors[0].message.find("a configuration file may hold") != std::string::npos);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("metrics.web_config is read relative to the daemon file, and its files relative to itself") {
  TempDir dir;
  const std::string hash = "$2y$10$hLqFl9jSjoAAy95Z/zw8Ye8wkdMBM8c5Bn1ptYqP/AXyV0.oy0S8m";
  dir.write("etc/tidemark.yaml", "state: w\nconnections: { w: { dsn: x } }\npipelines_dir: p\n"
                                 "metrics: { listen: \"127.0.0.1:9464\", web_config: web/web.yml }\n");
  dir.write("etc/p/.keep", "");
  dir.write("etc/web/web.yml", "tls_server_config:\n  cert_file: tls/server.crt\n  key_file: /abs/server.key\n"
                               "basic_auth_users:\n  prom: " + hash + "\n");
  const auto loaded = load_config((dir.path / "etc/tidemark.yaml").string());
  REQUIRE(loaded.errors.empty());
  const MetricsConfig& metrics = loaded.value->daemon.metrics;
  CHECK(metrics.listen == "127.0.0.1:9464");  // listen and web_config, in either order, both kept
  CHECK(metrics.web_config == "web/web.yml");
  CHECK(web_config_path(loaded.value->daemon) == (dir.path / "etc/web/web.yml").string());
  REQUIRE(metrics.web);
  CHECK(metrics.web->file == (dir.path / "etc/web/web.yml").string());
  REQUIRE(metrics.web->tls);
  CHECK(metrics.web->tls->cert_file.path == (dir.path / "etc/web/tls/server.crt").string());
  CHECK(metrics.web->tls->key_file.path == "/abs/server.key");
  CHECK(metrics.web->users.size() == 1);

  // Without web_config: nothing read, nothing guarded.
  dir.write("etc/plain.yaml", "state: w\nconnections: { w: { dsn: x } }\npipelines_dir: p\n");
  const auto plain = load_config((dir.path / "etc/plain.yaml").string());
  REQUIRE(plain.errors.empty());
  CHECK_FALSE(plain.value->daemon.metrics.web);
  CHECK(web_config_path(plain.value->daemon).empty());
}

TEST_CASE("a web_config that cannot be read is said where it is named; its own errors where they are") {
  TempDir dir;
  dir.write("t.yaml", "state: w\nconnections: { w: { dsn: x } }\npipelines_dir: p\n"
                      "metrics:\n  web_config: missing.yml\n");
  dir.write("p/.keep", "");
  auto loaded = load_config((dir.path / "t.yaml").string());
  REQUIRE(loaded.errors.size() == 1);
  CHECK(loaded.errors[0].to_string() == (dir.path / "t.yaml").string() +
                                            ":5:15: metrics.web_config: the web configuration " +
                                            (dir.path / "missing.yml").string() +
                                            " cannot read file: No such file or directory (web_config is relative "
                                            "to this file's folder)");

  dir.write("missing.yml", "tls_server_config:\n  cert_file: c\n  key_file: k\n  cert_files: c\n");
  loaded = load_config((dir.path / "t.yaml").string());
  REQUIRE(loaded.errors.size() == 1);
  CHECK(loaded.errors[0].file == (dir.path / "missing.yml").string());
  CHECK(loaded.errors[0].line == 4);
  CHECK(loaded.errors[0].column == 3);
  CHECK(loaded.errors[0].key_path == "tls_server_config.cert_files");
  CHECK_FALSE(loaded.value);
}

}  // namespace tidemark
