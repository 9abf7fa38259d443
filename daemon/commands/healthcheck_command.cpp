#include <cstdlib>
#include <optional>
#include <ostream>

#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/serve/http_probe.h"

namespace tidemark {

namespace {
// Within a container platform's usual check timeout (Docker's default: 30 s).
constexpr std::chrono::seconds kProbeTimeout{5};

// The endpoint keeps only bcrypt hashes, so a password for basic auth
// comes from the environment (docs/operations.md).
constexpr const char* kUserVariable = "TIDEMARK_HEALTHCHECK_USER";
constexpr const char* kPasswordVariable = "TIDEMARK_HEALTHCHECK_PASSWORD";

std::optional<BasicCredentials> credentials_from_environment() {
  const char* user = std::getenv(kUserVariable);
  const char* password = std::getenv(kPasswordVariable);
  if (user == nullptr || password == nullptr || *user == '\0') return std::nullopt;
  return BasicCredentials{user, password};
}
}  // namespace

int run_healthcheck(const ConfigPtr& config, const HealthcheckOptions& command_line, std::ostream& out,
                    std::ostream& err) {
  const std::string path = command_line.ready ? "/readyz" : "/healthz";
  const auto credentials = credentials_from_environment();
  const ProbeAnswer answer = probe_endpoint(config->daemon.metrics, path, kProbeTimeout, credentials);
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
  if (answer.status == 401) {
    err << (credentials ? "the endpoint refused " + credentials->user + " and the password in $" + kPasswordVariable
                        : std::string("the endpoint asks for a password (basic_auth_users): set ") + kUserVariable +
                              " and " + kPasswordVariable + " for tidemark healthcheck")
        << "\n";
  }
  return kExitFailure;
}

}  // namespace tidemark
