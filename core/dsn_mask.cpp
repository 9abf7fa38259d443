#include "core/dsn_mask.h"

#include <cctype>

namespace tidemark {
namespace {

constexpr std::string_view kMask = "****";

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// URI form: the password sits between "user:" and "@" in the authority,
// and may also appear as a "password=" query parameter.
std::string mask_uri(std::string_view uri, std::size_t scheme_end) {
  std::string out(uri.substr(0, scheme_end));
  std::string_view rest = uri.substr(scheme_end);
  const std::size_t authority_end = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, authority_end);
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    if (colon != std::string_view::npos) {
      out.append(userinfo.substr(0, colon + 1)).append(kMask);
    } else {
      out.append(userinfo);
    }
    out.append(authority.substr(at));
  } else {
    out.append(authority);
  }
  if (authority_end == std::string_view::npos) return out;
  const std::string_view tail = rest.substr(authority_end);
  const std::size_t query = tail.find('?');
  out.append(tail.substr(0, query));
  if (query == std::string_view::npos) return out;
  out += '?';
  std::string_view params = tail.substr(query + 1);
  for (;;) {
    const std::size_t amp = params.find('&');
    const std::string_view param = params.substr(0, amp);
    if (starts_with_ci(param, "password=")) {
      out.append("password=").append(kMask);
    } else {
      out.append(param);
    }
    if (amp == std::string_view::npos) break;
    out += '&';
    params = params.substr(amp + 1);
  }
  return out;
}

// key=value form: values may be 'single quoted' with \' and \\ escapes.
std::string mask_keyword_value(std::string_view dsn) {
  std::string out;
  std::size_t i = 0;
  while (i < dsn.size()) {
    // Copy whitespace.
    while (i < dsn.size() && std::isspace(static_cast<unsigned char>(dsn[i]))) out += dsn[i++];
    const std::size_t key_start = i;
    while (i < dsn.size() && dsn[i] != '=' && !std::isspace(static_cast<unsigned char>(dsn[i]))) ++i;
    const std::string_view key = dsn.substr(key_start, i - key_start);
    out.append(key);
    while (i < dsn.size() && std::isspace(static_cast<unsigned char>(dsn[i]))) out += dsn[i++];
    if (i >= dsn.size() || dsn[i] != '=') continue;
    out += dsn[i++];
    while (i < dsn.size() && std::isspace(static_cast<unsigned char>(dsn[i]))) out += dsn[i++];
    const std::size_t value_start = i;
    if (i < dsn.size() && dsn[i] == '\'') {
      ++i;
      while (i < dsn.size() && dsn[i] != '\'') i += (dsn[i] == '\\' && i + 1 < dsn.size()) ? 2 : 1;
      if (i < dsn.size()) ++i;
    } else {
      while (i < dsn.size() && !std::isspace(static_cast<unsigned char>(dsn[i]))) {
        i += (dsn[i] == '\\' && i + 1 < dsn.size()) ? 2 : 1;
      }
    }
    const bool is_password = key.size() == 8 && starts_with_ci(key, "password");
    if (is_password) {
      out.append(kMask);
    } else {
      out.append(dsn.substr(value_start, i - value_start));
    }
  }
  return out;
}

}  // namespace

std::string mask_dsn_password(std::string_view dsn) {
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (starts_with_ci(dsn, scheme)) return mask_uri(dsn, scheme.size());
  }
  return mask_keyword_value(dsn);
}

std::string scrub_password(std::string_view message, std::string_view dsn) {
  // Whatever follows the password in the DSN may be part of it when the DSN
  // is malformed: treat every token from there on as secret.
  std::string secret_text;
  const std::string lowered = [&] {
    std::string out(dsn);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  }();
  if (const std::size_t at = lowered.find("password"); at != std::string::npos) {
    secret_text = std::string(dsn.substr(at + 8));
  }
  if (starts_with_ci(dsn, "postgresql://") || starts_with_ci(dsn, "postgres://")) {
    const std::size_t scheme = dsn.find("://") + 3;
    const std::size_t end = dsn.find_first_of("/?", scheme);
    const std::string_view authority = dsn.substr(scheme, end == std::string_view::npos ? end : end - scheme);
    const std::size_t at = authority.rfind('@');
    const std::size_t colon = authority.find(':');
    if (at != std::string_view::npos && colon != std::string_view::npos && colon < at) {
      secret_text += " " + std::string(authority.substr(colon + 1, at - colon - 1));
    }
  }
  std::string out(message);
  std::string token;
  const auto scrub = [&] {
    if (token.size() >= 2) {
      for (std::size_t pos = 0; (pos = out.find(token, pos)) != std::string::npos;) {
        out.replace(pos, token.size(), kMask);
        pos += kMask.size();
      }
    }
    token.clear();
  };
  for (char c : secret_text) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '=' || c == '\'' || c == '&') {
      scrub();
    } else {
      token += c;
    }
  }
  scrub();
  return out;
}

}  // namespace tidemark
