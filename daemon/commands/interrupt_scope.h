// Turns SIGINT (Ctrl-C) and SIGTERM into the cancellation of one
// CancelToken while it is in scope, for the foreground commands (run,
// backfill). The handler only calls CancelToken::cancel with the signal's
// name, which is async-signal-safe; the command notices through the token
// (between steps and between the rows of a COPY) and ends the normal way,
// so its run rows record the cancellation. The first signal of a kind
// also restores that signal's default action: a second one ends the
// process at once. One scope at a time per process, constructed and
// destroyed on the main thread; the handler may run on any thread.
#pragma once

#include <csignal>

#include "core/run/cancel_token.h"

namespace tidemark {

class InterruptScope {
 public:
  explicit InterruptScope(CancelToken& token);
  // Puts the previous handlers back.
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace tidemark
