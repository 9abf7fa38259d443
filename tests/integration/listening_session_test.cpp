// The listening session against PostgreSQL: its client hears what is
// NOTIFYed on its channel, is told of a failure once and of the session
// that works again after it, and a reload opens the session again.
#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/serve/listening_session.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

constexpr const char* kListenChannel = "tidemark_listening_test";
constexpr ListeningSession::Timing kQuickTiming{std::chrono::milliseconds(50), std::chrono::milliseconds(100)};

// What the session told its client, kept for the test's thread.
class RecordingClient final : public ListeningSession::Client {
 public:
  void opened(PgConnection&, bool after_failure) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    opened_.push_back(after_failure);
  }
  void heard(PgConnection&, const std::vector<std::string>& payloads) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    heard_.insert(heard_.end(), payloads.begin(), payloads.end());
  }
  void failed(const std::exception& error, bool first) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    failures_.push_back(first);
    last_error_ = error.what();
  }
  std::vector<bool> opened() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return opened_;
  }
  std::vector<std::string> heard() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return heard_;
  }
  std::vector<bool> failures() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return failures_;
  }
  std::string last_error() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return last_error_;
  }

 private:
  std::mutex mutex_;
  std::vector<bool> opened_;
  std::vector<std::string> heard_;
  std::vector<bool> failures_;
  std::string last_error_;
};

const char* const kListeningPipeline =
    "pipeline: p\nsource: source\ntarget: target\nschedule: \"@hourly\"\ntables:\n"
    "  - { name: t, source_table: t, target_table: t, key: [id], cursor: updated_at }\n";

void notify(PgConnection& session, const std::string& payload) {
  session.exec("select pg_notify($1, $2)", {kListenChannel, payload});
}

}  // namespace

TEST_CASE("a listening session hears its channel, reopens after a reload, and tells a failure once") {
  PgTestEnv env;
  RecordingClient client;
  ListeningSession session(kListenChannel, kQuickTiming, client);
  session.set_config(env.config(kListeningPipeline));
  REQUIRE(testing::eventually(std::chrono::seconds(10), [&] { return client.opened().size() == 1; }));
  CHECK(client.opened() == std::vector<bool>{false});

  notify(env.target(), "one");
  notify(env.target(), "two");
  notify(env.target(), "elsewhere");  // same channel, a third payload: all heard, in order
  env.target().exec("select pg_notify('tidemark_other_channel', 'not this one')");
  REQUIRE(testing::eventually(std::chrono::seconds(10), [&] { return client.heard().size() == 3; }));
  CHECK(client.heard() == std::vector<std::string>{"one", "two", "elsewhere"});

  // A reload opens a session on the new configuration's state database.
  session.set_config(env.config(kListeningPipeline));
  REQUIRE(testing::eventually(std::chrono::seconds(10), [&] { return client.opened().size() == 2; }));
  CHECK(client.failures().empty());

  // A state database that cannot be reached: told once, then tried again
  // until a configuration that works comes.
  env.set_dsn("target", env.dsn("target") + "_missing");
  session.set_config(env.config(kListeningPipeline));
  REQUIRE(testing::eventually(std::chrono::seconds(10), [&] { return client.failures().size() >= 3; }));
  const std::vector<bool> failures = client.failures();
  CHECK(failures.front());
  CHECK(std::count(failures.begin(), failures.end(), true) == 1);
  CHECK(client.last_error().find("_missing") != std::string::npos);

  env.set_dsn("target", env.dsn("target"));
  session.set_config(env.config(kListeningPipeline));
  REQUIRE(testing::eventually(std::chrono::seconds(10), [&] { return client.opened().size() == 3; }));
  CHECK(client.opened().back());  // after the failures
  notify(env.target(), "again");
  REQUIRE(testing::eventually(std::chrono::seconds(10), [&] { return client.heard().size() == 4; }));
  CHECK(client.heard().back() == "again");
  session.stop();
  session.stop();  // idempotent
}

}  // namespace tidemark
