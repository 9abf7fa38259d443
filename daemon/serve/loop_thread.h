// The thread that runs the event loop, recorded where a loop-bound object
// is made (serve makes them on the thread that then runs the loop), so
// that the methods that must run on that thread say so in code: check()
// aborts, naming the method, when it is called from any other. A value
// owned by each loop-bound object; check() may be called on any thread.
#pragma once

#include <thread>

namespace tidemark {

class LoopThread {
 public:
  LoopThread() : id_(std::this_thread::get_id()) {}

  // Aborts the process, saying which method was called off the loop
  // thread: a broken thread contract is no error to recover from.
  void check(const char* method) const;

 private:
  std::thread::id id_;
};

}  // namespace tidemark
