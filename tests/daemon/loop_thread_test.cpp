// LoopThread: a method called off the loop's thread aborts the process,
// saying which; on the loop's thread it passes. The abort is watched from
// a forked child, so the suite goes on.
#include "daemon/serve/loop_thread.h"

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace tidemark {
namespace {

// How a child that runs `body` ends: its exit status, or the signal that ended it.
int child_status(void (*body)()) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The abort is the child's own: not the test runner's crash report.
    std::signal(SIGABRT, SIG_DFL);
    std::freopen("/dev/null", "w", stderr);
    body();
    std::_Exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return status;
}

TEST_CASE("a loop-bound method called off the loop's thread aborts the process") {
  const int off_loop = child_status([] {
    const LoopThread loop;
    std::thread other([&] { loop.check("Test::method"); });
    other.join();
  });
  CHECK(WIFSIGNALED(off_loop));
  CHECK(WTERMSIG(off_loop) == SIGABRT);

  const int on_loop = child_status([] {
    const LoopThread loop;
    loop.check("Test::method");
  });
  CHECK(WIFEXITED(on_loop));
  CHECK(WEXITSTATUS(on_loop) == 0);
}

}  // namespace
}  // namespace tidemark
