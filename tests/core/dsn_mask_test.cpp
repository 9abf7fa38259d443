#include <doctest/doctest.h>

#include "core/dsn_mask.h"

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

}  // namespace tidemark
