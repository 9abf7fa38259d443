// One side's rows of a list of keys as a row hash stream: the keys sent
// in batches, each as the $1 (keys_json) of one statement of
// keyed_hash_statements, whose rows come in key order; the list being
// ascending, the batches follow on. The first batch is sent when the
// stream is made, so that both sides' lookups run at once, and each next
// one as soon as the one before has answered. Owned by its caller for one
// diff on one thread, with the list it reads; the connection takes
// nothing else until the stream has ended. Failures are values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/diff/key_list.h"
#include "core/diff/row_hash_stream.h"
#include "core/run/cancel_token.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

class PgKeyedHashStream : public RowHashStream {
 public:
  // `columns`: the key columns' names, as the JSON names them; `batch`:
  // keys a statement takes.
  PgKeyedHashStream(PgConnection& connection, std::string statement, const KeyList& keys,
                    std::vector<std::string> columns, std::vector<KeyOrder> order, std::size_t batch,
                    const CancelToken& cancel);

  Result<bool> next(RowHash& row) override;

 private:
  // Sends the next batch, if any keys are left.
  void send_next();
  void read(int at, RowHash& row) const;

  PgConnection& connection_;
  const std::string statement_;
  const KeyList& keys_;
  const std::vector<std::string> columns_;
  const std::vector<KeyOrder> order_;
  const std::size_t batch_size_;
  const CancelToken& cancel_;
  KeyList::Cursor at_;
  bool in_flight_ = false;
  std::optional<PgResult> batch_;  // the batch being read
  int row_ = 0;                    // its next row
  std::optional<Error> failed_;    // a failure of the first send, reported by next()
};

}  // namespace tidemark
