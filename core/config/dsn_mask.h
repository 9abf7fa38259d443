// Hides passwords in libpq connection strings before they reach a log,
// an error message or a metric. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace tidemark {

// Replaces every secret libpq knows with "****": the value of `password`,
// `sslpassword` and `oauth_client_secret` in a key=value DSN (quoted or
// not) or as URI parameters (`?password=...`), and a URI's password
// (`postgresql://user:secret@host/db`) whatever characters it holds: as in
// libpq, only a "/" ends the user-info, so `bob:pa?ss@host` hides `pa?ss`.
// Text that is neither form is returned unchanged.
std::string mask_dsn_password(std::string_view dsn);

// Removes from `message` (an error from libpq about `dsn`) every fragment
// of the DSN's password, even when the DSN is malformed and libpq echoes a
// piece of it ("missing \"=\" after \"...\""). Fragments shorter than two
// characters are left, since they cannot be told from ordinary text.
std::string scrub_password(std::string_view message, std::string_view dsn);

}  // namespace tidemark
