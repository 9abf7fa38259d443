// A state session that LISTENs on one channel, for a client that acts on
// what it hears: a thread opens it at the first configuration, again
// after a failure (after a pause) and after a reload (whose state database
// may have moved), and waits on it in slices so that stop() is heard.
// Owned by its client; public methods are thread-safe; the client's
// methods are called on the thread.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/config/config_model.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

class ListeningSession {
 public:
  // What the session serves. An exception from opened() or heard() ends
  // the session as a failure of its own would.
  class Client {
   public:
    virtual ~Client() = default;
    // The session listens; `after_failure` when the one before it failed.
    virtual void opened(PgConnection& session, bool after_failure) = 0;
    // After every wait: the payloads heard, oldest first, none when the
    // slice passed in silence.
    virtual void heard(PgConnection& session, const std::vector<std::string>& payloads) = 0;
    // The session could not be opened or failed; `first` for the first
    // failure since one worked. It is opened again after the retry pause.
    virtual void failed(const std::exception& error, bool first) = 0;
  };

  struct Timing {
    std::chrono::milliseconds slice;     // the longest wait before stop() is looked at
    std::chrono::milliseconds retry_after;  // between a failure and the next session
  };

  // `channel` is one of tidemark's own, a lower-case name that needs no quotes.
  ListeningSession(std::string channel, Timing timing, Client& client)
      : channel_(std::move(channel)), timing_(timing), client_(client) {}
  ~ListeningSession() { stop(); }
  ListeningSession(const ListeningSession&) = delete;
  ListeningSession& operator=(const ListeningSession&) = delete;

  // Starts the thread at the first call; a reload's configuration takes
  // the place of the one before.
  void set_config(std::shared_ptr<const Config> config);
  // Ends the thread; idempotent. The client must outlive this call: a
  // client that owns its session calls it first in its own destructor,
  // while its overrides can still be called.
  void stop();

 private:
  void loop();
  std::shared_ptr<const Config> config();

  const std::string channel_;
  const Timing timing_;
  Client& client_;
  std::mutex mutex_;
  std::shared_ptr<const Config> config_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace tidemark
