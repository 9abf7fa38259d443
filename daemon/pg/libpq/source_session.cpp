#include "daemon/pg/libpq/source_session.h"

namespace tidemark {

std::string read_only_source_settings() {
  return std::string("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY; SET application_name = '") +
         kReadOnlySourceApplication + "'; SET row_security = off";
}

void make_read_only_source(PgConnection& connection) { connection.exec(read_only_source_settings()); }

}  // namespace tidemark
