// The process exit codes of every command (SPEC §4).
#pragma once

namespace tidemark {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,      // a runtime failure: database down, run failed
  kExitUsage = 2,        // bad arguments or an invalid configuration
};

}  // namespace tidemark
