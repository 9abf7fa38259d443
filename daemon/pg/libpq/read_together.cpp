#include "daemon/pg/libpq/read_together.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

ReadTogether::ReadTogether(std::initializer_list<PgConnection*> sessions) : sessions_(sessions) {
  for (PgConnection* session : sessions_) {
    held_before_.push_back(session->together_);
    session->together_ = this;
    session->last_read_ = std::chrono::steady_clock::now();
  }
}

ReadTogether::~ReadTogether() {
  for (std::size_t i = 0; i < sessions_.size(); ++i) sessions_[i]->together_ = held_before_[i];
}

void ReadTogether::wait(PgConnection& self, short events, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + timeout;
  std::vector<pollfd> sockets;
  std::vector<PgConnection*> polled;
  for (;;) {
    const Clock::time_point now = Clock::now();
    self.last_read_ = now;
    sockets.assign(1, pollfd{self.socket(), events, 0});
    polled.assign(1, &self);
    auto wait_for = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                             std::chrono::milliseconds(0));
    for (PgConnection* other : sessions_) {
      if (other == &self || !other->answering()) continue;
      const Clock::time_point due = other->last_read_ + kUnreadLimit;
      if (due <= now) {
        sockets.push_back(pollfd{other->socket(), POLLIN, 0});
        polled.push_back(other);
      } else {
        wait_for = std::min(wait_for, std::chrono::ceil<std::chrono::milliseconds>(due - now));
      }
    }
    const int ready = ::poll(sockets.data(), sockets.size(), static_cast<int>(wait_for.count()));
    if (ready < 0 && errno != EINTR) return;  // the caller's read says what broke
    for (std::size_t i = 1; i < sockets.size(); ++i) {
      if (sockets[i].revents != 0) polled[i]->read_arrived();
    }
    if (sockets[0].revents != 0 || Clock::now() >= deadline) return;
  }
}

void ReadTogether::tend() {
  // Every session, the one being read too: a reader handing out what it
  // read ahead is not reading its socket.
  const auto now = std::chrono::steady_clock::now();
  for (PgConnection* session : sessions_) {
    if (!session->answering() || session->last_read_ + kUnreadLimit > now) continue;
    pollfd socket{session->socket(), POLLIN, 0};
    if (::poll(&socket, 1, 0) > 0) session->read_arrived();
  }
}

}  // namespace tidemark
