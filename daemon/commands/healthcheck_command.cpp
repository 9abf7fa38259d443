#include <ostream>

#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/serve/http_probe.h"

namespace tidemark {

namespace {
// Within a container platform's usual check timeout (Docker's default: 30 s).
constexpr std::chrono::seconds kProbeTimeout{5};
}  // namespace

int run_healthcheck(const ConfigPtr& config, const HealthcheckOptions& command_line, std::ostream& out,
                    std::ostream& err) {
  const std::string path = command_line.ready ? "/readyz" : "/healthz";
  const ProbeAnswer answer = probe_endpoint(config->daemon.metrics, path, kProbeTimeout);
  if (!answer.answered) {
    err << answer.body << "\n";
    return kExitFailure;
  }
  std::string body = answer.body;
  while (!body.empty() && body.back() == '\n') body.pop_back();
  if (answer.status == 200) {
    out << path << ": " << body << "\n";
    return kExitOk;
  }
  err << path << ": " << answer.status << " " << body << "\n";
  return kExitFailure;
}

}  // namespace tidemark
