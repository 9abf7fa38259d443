// Decides whether a request's Authorization header names one of
// basic_auth_users with its password: bcrypt through libxcrypt, compared in
// constant time, and each user's last verified password remembered as a
// SHA-256 digest so that a scrape every few seconds costs no bcrypt. Owner:
// the HttpEndpoint, one per web configuration. Thread-safe (a mutex over
// the remembered digests); a check that misses them takes bcrypt's time.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config_model.h"

namespace tidemark {

// A user and password as a Basic Authorization header carries them.
struct BasicCredentials {
  std::string user;
  std::string password;
};

// "Basic <base64 of user:password>" (the scheme's case ignored), or nothing
// when the header is not one: another scheme, bad base64, no colon, a NUL.
std::optional<BasicCredentials> parse_basic_authorization(std::string_view header);

// The header value that carries `credentials`, for a client.
std::string basic_authorization(const BasicCredentials& credentials);

class BasicAuth {
 public:
  explicit BasicAuth(std::vector<BasicAuthUser> users);
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  // True when `authorization` (the header's value; empty when absent)
  // names a user of the list with its password. An unknown user costs a
  // bcrypt too, so the time taken does not tell which users exist.
  bool allows(std::string_view authorization);

  // How many checks ran bcrypt (not answered from the remembered digests).
  std::size_t bcrypt_runs() const;

 private:
  using Digest = std::array<unsigned char, 32>;

  std::vector<BasicAuthUser> users_;
  mutable std::mutex mutex_;
  std::map<std::string, Digest> verified_;  // user -> SHA-256 of its last good password
  std::size_t bcrypt_runs_ = 0;
};

}  // namespace tidemark
