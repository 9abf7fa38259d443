#include "daemon/pg/data/pg_row_hash_stream.h"

#include <cstdint>
#include <cstring>

#include "core/run/cancel_token.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {
namespace {

// Binary COPY's integers are big-endian.
std::uint64_t big_endian(const char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Rows between cancel checks: a check is an atomic load, a row a few ns.
constexpr std::size_t kCancelEvery = 4096;

}  // namespace

PgRowHashStream::PgRowHashStream(PgConnection& connection, const std::string& copy_out, std::vector<KeyOrder> order,
                                 const CancelToken& cancel, bool counted)
    : reader_(connection, copy_out),
      order_(std::move(order)),
      cancel_(cancel),
      label_(connection.label()),
      counted_(counted) {}

Result<bool> PgRowHashStream::next(RowHash& row) {
  return as_result([&]() -> Result<bool> {
    for (;;) {
      if (++rows_ % kCancelEvery == 0 && cancel_.cancelled()) return Error{cancel_.reason()};
      const auto message = reader_.next();
      if (!message) return false;
      if (parse(*message, row)) return true;
    }
  });
}

// One message: [header] a tuple, or the trailer (-1), or both.
bool PgRowHashStream::parse(std::string_view m, RowHash& row) {
  std::size_t at = 0;
  const auto need = [&](std::size_t n) {
    if (at + n > m.size()) throw PgError(ErrorKind::Transient, label_ + ": a row of the row-hash COPY ended early");
  };
  if (header_) {
    need(19);
    static constexpr char kSignature[] = "PGCOPY\n\377\r\n";
    if (std::memcmp(m.data(), kSignature, 11) != 0) {
      throw PgError(ErrorKind::Transient, label_ + ": the row-hash COPY is not binary");
    }
    const std::size_t extension = big_endian(m.data() + 15, 4);
    at = 19 + extension;
    header_ = false;
  }
  need(2);
  const auto fields = static_cast<std::int16_t>(big_endian(m.data() + at, 2));
  at += 2;
  if (fields == -1) return false;  // the trailer
  const std::size_t hash_at = order_.size();
  if (fields != static_cast<std::int16_t>(hash_at + (counted_ ? 2 : 1))) {
    throw PgError(ErrorKind::Transient, label_ + ": the row-hash COPY sent " + std::to_string(fields) + " columns");
  }
  row.key.resize(order_.size());
  row.rows = 1;
  for (std::size_t i = 0; i < static_cast<std::size_t>(fields); ++i) {
    need(4);
    const auto length = static_cast<std::int32_t>(big_endian(m.data() + at, 4));
    at += 4;
    const bool hash = i >= hash_at;  // the hash, or the count after it
    if (length < 0) {
      if (hash) throw PgError(ErrorKind::Transient, label_ + ": the row-hash COPY sent a NULL hash");
      row.key[i] = KeyField{};
      row.key[i].null = true;
      continue;
    }
    need(static_cast<std::size_t>(length));
    const char* value = m.data() + at;
    at += static_cast<std::size_t>(length);
    if (hash || order_[i] == KeyOrder::Integer) {
      if (length != 8) {
        throw PgError(ErrorKind::Transient,
                      label_ + ": the row-hash COPY sent a bigint of " + std::to_string(length) + " bytes");
      }
      const std::uint64_t v = big_endian(value, 8);
      if (i == hash_at) {
        row.hash = v;
      } else if (hash) {
        row.rows = static_cast<std::int64_t>(v);
      } else {
        row.key[i] = KeyField{};
        row.key[i].integer = static_cast<std::int64_t>(v);
      }
    } else {
      row.key[i] = KeyField{};
      row.key[i].bytes = std::string_view(value, static_cast<std::size_t>(length));
    }
  }
  return true;
}

}  // namespace tidemark
