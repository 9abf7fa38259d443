#include "daemon/serve/loop_thread.h"

#include <cstdio>
#include <cstdlib>

namespace tidemark {

void LoopThread::check(const char* method) const {
  if (std::this_thread::get_id() == id_) return;
  std::fprintf(stderr, "tidemark: %s was called off the event loop's thread\n", method);
  std::abort();
}

}  // namespace tidemark
