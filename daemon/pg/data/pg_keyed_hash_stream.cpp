#include "daemon/pg/data/pg_keyed_hash_stream.h"

namespace tidemark {

PgKeyedHashStream::PgKeyedHashStream(PgConnection& connection, std::string statement, const KeyList& keys,
                                     std::vector<std::string> columns, std::vector<KeyOrder> order,
                                     std::size_t batch, const CancelToken& cancel)
    : connection_(connection),
      statement_(std::move(statement)),
      keys_(keys),
      columns_(std::move(columns)),
      order_(std::move(order)),
      batch_size_(batch),
      cancel_(cancel) {
  const Status sent = as_result([&] { send_next(); });
  if (!sent) failed_ = sent.failure();
}

void PgKeyedHashStream::send_next() {
  const std::string keys = keys_.next_json(at_, columns_, batch_size_);
  if (keys.empty()) return;
  connection_.send(statement_, {keys});
  in_flight_ = true;
}

Result<bool> PgKeyedHashStream::next(RowHash& row) {
  if (failed_) return *failed_;
  try {
    for (;;) {
      if (batch_ && row_ < batch_->rows()) {
        read(row_++, row);
        return true;
      }
      if (!in_flight_) return false;
      in_flight_ = false;
      batch_ = connection_.finish(&cancel_);
      row_ = 0;
      send_next();
    }
  } catch (const PgError& e) {
    return e.as_error();
  } catch (const std::exception& e) {
    return Error{connection_.label() + ": a row of the keyed row hashes could not be read: " + e.what()};
  }
}

void PgKeyedHashStream::read(int at, RowHash& row) const {
  const int hash_at = static_cast<int>(order_.size());
  if (batch_->columns() != hash_at + 1) {
    throw PgError(ErrorKind::Transient, connection_.label() + ": the keyed row hashes came with " +
                                            std::to_string(batch_->columns()) + " columns");
  }
  row.key.assign(order_.size(), KeyField{});
  row.rows = 1;
  for (int i = 0; i < hash_at; ++i) {
    KeyField& field = row.key[static_cast<std::size_t>(i)];
    if (batch_->is_null(at, i)) {
      field.null = true;
    } else if (order_[static_cast<std::size_t>(i)] == KeyOrder::Integer) {
      field.integer = batch_->integer(at, i);
    } else {
      field.bytes = batch_->view(at, i);
    }
  }
  if (batch_->is_null(at, hash_at)) {
    throw PgError(ErrorKind::Transient, connection_.label() + ": the keyed row hashes sent a NULL hash");
  }
  row.hash = static_cast<std::uint64_t>(batch_->integer(at, hash_at));
}

}  // namespace tidemark
