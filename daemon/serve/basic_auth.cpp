#include "daemon/serve/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <memory>

namespace tidemark {
namespace {

constexpr std::size_t kMaxHeader = 4096;  // longer is no credential this endpoint has

bool equal_in_constant_time(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The password hashed with `setting` (a stored hash: its salt and cost);
// empty when crypt refuses it.
std::string bcrypt(const std::string& password, const std::string& setting) {
  auto data = std::make_unique<crypt_data>();  // about 32 KiB: not on the stack
  const char* hashed = ::crypt_rn(password.c_str(), setting.c_str(), data.get(), sizeof(crypt_data));
  return hashed == nullptr || hashed[0] == '*' ? std::string() : std::string(hashed);
}

}  // namespace

std::optional<BasicCredentials> parse_basic_authorization(std::string_view header) {
  while (!header.empty() && (header.back() == ' ' || header.back() == '\t')) header.remove_suffix(1);
  constexpr std::string_view kScheme = "basic ";
  if (header.size() <= kScheme.size() || header.size() > kMaxHeader) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view encoded = header.substr(kScheme.size());
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  if (encoded.empty() || encoded.size() % 4 != 0) return std::nullopt;
  std::string decoded(encoded.size() / 4 * 3, '\0');
  const int n = ::EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                  reinterpret_cast<const unsigned char*>(encoded.data()), static_cast<int>(encoded.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the bytes the padding stands for as zeros.
  std::size_t padding = 0;
  for (std::size_t i = encoded.size(); i > 0 && encoded[i - 1] == '=' && padding < 2; --i) ++padding;
  decoded.resize(static_cast<std::size_t>(n) - padding);
  if (decoded.find('\0') != std::string::npos) return std::nullopt;
  const std::size_t colon = decoded.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return BasicCredentials{decoded.substr(0, colon), decoded.substr(colon + 1)};
}

std::string basic_authorization(const BasicCredentials& credentials) {
  const std::string plain = credentials.user + ":" + credentials.password;
  std::string encoded((plain.size() + 2) / 3 * 4 + 1, '\0');
  const int n = ::EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                                  reinterpret_cast<const unsigned char*>(plain.data()), static_cast<int>(plain.size()));
  encoded.resize(static_cast<std::size_t>(n));
  return "Basic " + encoded;
}

BasicAuth::BasicAuth(std::vector<BasicAuthUser> users) : users_(std::move(users)) {}

bool BasicAuth::allows(std::string_view authorization) {
  if (users_.empty()) return true;
  const auto credentials = parse_basic_authorization(authorization);
  if (!credentials) return false;
  Digest digest{};
  ::SHA256(reinterpret_cast<const unsigned char*>(credentials->password.data()), credentials->password.size(),
           digest.data());

  const auto user = std::find_if(users_.begin(), users_.end(),
                                 [&](const BasicAuthUser& u) { return u.name == credentials->user; });
  if (user != users_.end()) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto known = verified_.find(user->name);
    if (known != verified_.end() && CRYPTO_memcmp(known->second.data(), digest.data(), digest.size()) == 0) {
      return true;
    }
  }
  // An unknown user is hashed against the first user's hash (same cost),
  // then refused.
  const std::string& stored = user != users_.end() ? user->bcrypt_hash : users_.front().bcrypt_hash;
  const std::string hashed = bcrypt(credentials->password, stored);
  const bool ok = equal_in_constant_time(hashed, stored) && user != users_.end();
  std::lock_guard<std::mutex> lock(mutex_);
  ++bcrypt_runs_;
  if (ok) verified_[user->name] = digest;
  return ok;
}

std::size_t BasicAuth::bcrypt_runs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bcrypt_runs_;
}

}  // namespace tidemark
