#include "daemon/commands/interrupt_scope.h"

#include <atomic>

namespace tidemark {
namespace {

// The token of the scope in force; a lock-free atomic, so the handler may read it.
std::atomic<CancelToken*> g_token{nullptr};

extern "C" void on_interrupt(int signal) {
  if (CancelToken* token = g_token.load()) token->cancel(signal == SIGINT ? "SIGINT" : "SIGTERM");
}

}  // namespace

InterruptScope::InterruptScope(CancelToken& token) {
  g_token.store(&token);
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: nothing waits for EINTR to notice the flag (libpq retries
  // its waits, COPY loops poll the token), and plain writes to the
  // terminal must not fail because of it. SA_RESETHAND: see the header.
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  g_token.store(nullptr);
}

}  // namespace tidemark
