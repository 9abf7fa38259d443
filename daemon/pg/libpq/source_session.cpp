#include "daemon/pg/libpq/source_session.h"

namespace tidemark {

std::string read_only_source_settings() {
  // A source session holds no lock, and its COPY waits while the target
  // takes the rows: the server must not take that wait, a closed window,
  // for a vanished client (tcp_user_timeout counts it).
  return std::string("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY; SET application_name = '") +
         kReadOnlySourceApplication + "'; SET row_security = off; SET tcp_user_timeout = 0";
}

void make_read_only_source(PgConnection& connection) { connection.exec(read_only_source_settings()); }

}  // namespace tidemark
