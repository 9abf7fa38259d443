#include <doctest/doctest.h>

#include "core/config/dsn_mask.h"

namespace tidemark {

TEST_CASE("passwords are masked in every DSN form") {
  struct Row {
    const char* dsn;
    const char* masked;
  };
  const Row rows[] = {
      {"host=db dbname=shop", "host=db dbname=shop"},
      {"host=db password=hunter2 dbname=shop", "host=db password=**** dbname=shop"},
      {"host=db password = hunter2", "host=db password = ****"},
      {"password='a \\' b' user=x", "password=**** user=x"},
      {"PASSWORD=x", "PASSWORD=****"},
      {"passwordx=keep", "passwordx=keep"},
      {"postgresql://alice:hunter2@db:5432/shop", "postgresql://alice:****@db:5432/shop"},
      {"postgres://alice@db/shop", "postgres://alice@db/shop"},
      {"postgresql://db/shop?user=a&password=hunter2&sslmode=require",
       "postgresql://db/shop?user=a&password=****&sslmode=require"},
      {"postgresql://a:b@db?password=c", "postgresql://a:****@db?password=****"},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.dsn));
    CHECK(mask_dsn_password(row.dsn) == row.masked);
  }
}

// Issue 10, item 2: libpq ends a URI's user-info only at "/", so a "?" in
// the password was shown; sslpassword was shown in clear.
TEST_CASE("regression: a URI password holding ? and every sslpassword are masked") {
  struct Row {
    const char* dsn;
    const char* masked;
  };
  const Row rows[] = {
      {"postgresql://bob:pa?ss@host/db", "postgresql://bob:****@host/db"},
      {"postgresql://bob:pa?ss@host", "postgresql://bob:****@host"},
      {"postgresql://bob:p#a&s=s@host/db?sslmode=require", "postgresql://bob:****@host/db?sslmode=require"},
      {"postgresql://bob:pa@ss@host/db", "postgresql://bob:****@host/db"},
      {"postgresql://host:5432?user=a@b&password=x", "postgresql://host:****@b&password=****"},
      {"postgresql://db/shop?user=a@corp&sslpassword=keypass", "postgresql://db/shop?user=a@corp&sslpassword=****"},
      {"postgresql://db/shop?SSLPASSWORD=k", "postgresql://db/shop?SSLPASSWORD=****"},
      {"host=db sslpassword=keypass sslkey=/k.pem", "host=db sslpassword=**** sslkey=/k.pem"},
      {"host=db sslpassword='a b' password=c", "host=db sslpassword=**** password=****"},
      {"host=db oauth_client_secret=s3cret", "host=db oauth_client_secret=****"},
      {"host=db passfile=/p sslkey=/k", "host=db passfile=/p sslkey=/k"},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.dsn));
    CHECK(mask_dsn_password(row.dsn) == row.masked);
  }
}

TEST_CASE("libpq errors about a malformed DSN never carry a piece of its password") {
  CHECK(scrub_password("missing \"=\" after \"oops\" in connection info string", "host=/tmp password=hunter2 oops") ==
        "missing \"=\" after \"****\" in connection info string");
  CHECK(scrub_password("missing \"=\" after \"2x\"", "host=db password=hunter 2x") == "missing \"=\" after \"****\"");
  CHECK(scrub_password("bad: hunter2@db", "postgresql://alice:hunter2@db/shop") == "bad: ****@db");
  CHECK(scrub_password("could not connect to db: timeout", "host=db password=p") == "could not connect to db: timeout");
  CHECK(scrub_password("no password here", "host=db dbname=shop") == "no password here");
  CHECK(scrub_password("bad: pa?ss@host", "postgresql://bob:pa?ss@host/db") == "bad: ****@host");
  CHECK(scrub_password("missing \"=\" after \"keypass\"", "host=db sslpassword=keypass") ==
        "missing \"=\" after \"****\"");
}

}  // namespace tidemark
