#include "core/config/dsn_mask.h"

#include <algorithm>
#include <cctype>

#include "core/text/plain_text.h"

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

// libpq's secret keywords: their values are never shown.
bool is_secret_key(std::string_view key) {
  for (std::string_view secret : {"password", "sslpassword", "oauth_client_secret"}) {
    if (key.size() == secret.size() && starts_with_ci(key, secret)) return true;
  }
  return false;
}

// The user-info of a URI, as libpq reads it, ends at an "@" before the
// first "/": a "?" or "#" does not end it. Returns the position of the
// last such "@" in `rest` (the text after the scheme), or npos. The last,
// not the first, so that a password holding an "@" is hidden whole.
std::size_t userinfo_end(std::string_view rest) {
  return rest.substr(0, rest.find('/')).rfind('@');
}

// URI form: the password sits between "user:" and "@" in the authority,
// and may also appear as a "password=" (or "sslpassword=") parameter.
// Parameters are masked wherever a "?" or "&" starts one, so that text
// taken for user-info cannot hide a parameter after it.
std::string mask_uri(std::string_view uri, std::size_t scheme_end) {
  std::string out(uri.substr(0, scheme_end));
  std::string_view rest = uri.substr(scheme_end);
  if (const std::size_t at = userinfo_end(rest); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    if (colon != std::string_view::npos) {
      out.append(userinfo.substr(0, colon + 1)).append(kMask);
    } else {
      out.append(userinfo);
    }
    rest = rest.substr(at);
  }
  std::size_t i = 0;
  while (i < rest.size()) {
    const std::size_t start = rest.find_first_of("?&", i);
    if (start == std::string_view::npos) {
      out.append(rest.substr(i));
      break;
    }
    out.append(rest.substr(i, start + 1 - i));
    const std::size_t end = std::min(rest.find('&', start + 1), rest.size());
    const std::string_view param = rest.substr(start + 1, end - start - 1);
    const std::size_t eq = param.find('=');
    if (eq != std::string_view::npos && is_secret_key(param.substr(0, eq))) {
      out.append(param.substr(0, eq + 1)).append(kMask);
    } else {
      out.append(param);
    }
    i = end;
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
    if (is_secret_key(key)) {
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
  const std::string lowered = ascii_lower(dsn);
  std::size_t first_secret = std::string::npos;
  for (const char* word : {"password", "client_secret"}) first_secret = std::min(first_secret, lowered.find(word));
  if (first_secret != std::string::npos) {
    const std::size_t value = lowered.find('=', first_secret);
    secret_text = std::string(dsn.substr(value == std::string::npos ? first_secret : value + 1));
  }
  if (starts_with_ci(dsn, "postgresql://") || starts_with_ci(dsn, "postgres://")) {
    const std::string_view rest = dsn.substr(dsn.find("://") + 3);
    const std::size_t at = userinfo_end(rest);
    const std::size_t colon = rest.find(':');
    if (at != std::string_view::npos && colon != std::string_view::npos && colon < at) {
      secret_text += " " + std::string(rest.substr(colon + 1, at - colon - 1));
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
