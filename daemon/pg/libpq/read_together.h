// Sessions whose answers one thread reads at once (the two sides of a row
// diff, a reconcile's key sides, a copy's source while its target takes
// the rows): while it waits on one, or reads one without waiting, it also
// reads any it has left unread for a second, into that one's own buffer
// (a COPY reader's spill queue, else libpq's). No server then sits with a full send buffer for long, which
// the user timeout every session sets counts as a vanished client. Made
// around the reads, on one thread; its sessions outlive it.
#pragma once

#include <chrono>
#include <initializer_list>
#include <vector>

namespace tidemark {

class PgConnection;

class ReadTogether {
 public:
  // A session is read with one group at a time: a group made while
  // another holds it (a diff within a reconcile) takes it until it ends.
  ReadTogether(std::initializer_list<PgConnection*> sessions);
  ~ReadTogether();
  ReadTogether(const ReadTogether&) = delete;
  ReadTogether& operator=(const ReadTogether&) = delete;

  // How long a session with an answer under way may go unread: far below
  // the shortest user timeout a lease gives (core/fleet/keepalive_times.h).
  static constexpr std::chrono::milliseconds kUnreadLimit{1000};

  // Blocks until `self`'s socket is ready for `events` (poll's: POLLIN,
  // POLLOUT) or `timeout` passes, reading the others as they come due.
  // Throws PgError when reading ahead fails.
  void wait(PgConnection& self, short events, std::chrono::milliseconds timeout);
  // Reads the sessions that are due, without blocking.
  void tend();

 private:
  std::vector<PgConnection*> sessions_;
  std::vector<ReadTogether*> held_before_;  // each session's group before this one
};

}  // namespace tidemark
