#include "core/diff/key_list.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/text/json_text.h"

namespace tidemark {
namespace {

// A field is a tag (NULL or not), then for an integer its 8 bytes, for
// bytes their length (4 bytes) and the bytes.
constexpr char kNull = 'n';
constexpr char kValue = 'v';

template <class T>
void put(std::string& out, T value) {
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  out.append(raw, sizeof(T));
}

template <class T>
T get(const std::string& in, std::size_t& at) {
  if (at + sizeof(T) > in.size()) std::abort();  // a key packed by add() is whole
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

// A field as record_out writes it inside ROW(...)::text: quoted when empty
// or holding a delimiter, quote, backslash or space.
void append_record_field(std::string& out, std::string_view text) {
  bool quote = text.empty();
  for (const char c : text) {
    if (c == '"' || c == '\\' || c == '(' || c == ')' || c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      quote = true;
    }
  }
  if (!quote) {
    out.append(text);
    return;
  }
  out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') out += c;
    out += c;
  }
  out += '"';
}

}  // namespace

void KeyList::add(const std::vector<KeyField>& key) {
  if (key.size() != order_.size()) std::abort();  // a field for each key column
  for (std::size_t i = 0; i < key.size(); ++i) {
    const KeyField& f = key[i];
    if (f.null) {
      packed_ += kNull;
      nulls_[i] = true;
      continue;
    }
    packed_ += kValue;
    if (order_[i] == KeyOrder::Integer) {
      put<std::int64_t>(packed_, f.integer);
    } else {
      put<std::uint32_t>(packed_, static_cast<std::uint32_t>(f.bytes.size()));
      packed_.append(f.bytes);
    }
  }
  ++count_;
}

template <class Visit>
void KeyList::read(Cursor& at, std::size_t most, Visit visit) const {
  std::vector<KeyField> fields(order_.size());
  for (std::size_t n = 0; n < most && at.index < count_; ++n, ++at.index) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      KeyField& f = fields[i];
      f = KeyField{};
      if (packed_.at(at.offset++) == kNull) {
        f.null = true;
      } else if (order_[i] == KeyOrder::Integer) {
        f.integer = get<std::int64_t>(packed_, at.offset);
      } else {
        const auto length = get<std::uint32_t>(packed_, at.offset);
        if (at.offset + length > packed_.size()) std::abort();
        f.bytes = std::string_view(packed_.data() + at.offset, length);
        at.offset += length;
      }
    }
    visit(fields);
  }
}

std::string KeyList::next_json(Cursor& at, const std::vector<std::string>& columns, std::size_t most) const {
  if (at.index >= count_) return {};
  if (columns.size() != order_.size()) std::abort();  // a name for each key column
  std::vector<std::string> names;
  for (const std::string& c : columns) names.push_back("\"" + json_escape(c) + "\":");
  std::string out = "[";
  read(at, most, [&](const std::vector<KeyField>& fields) {
    out += out.size() == 1 ? "{" : ",{";
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out += ',';
      out += names[i];
      const KeyField& f = fields[i];
      if (f.null) {
        out += "null";
      } else if (order_[i] == KeyOrder::Integer) {
        out += '"' + std::to_string(f.integer) + '"';
      } else {
        out += '"' + json_escape(f.bytes) + '"';
      }
    }
    out += '}';
  });
  return out + "]";
}

std::vector<std::int64_t> KeyList::integers(bool& has_null) const {
  if (order_ != std::vector<KeyOrder>{KeyOrder::Integer}) std::abort();  // one integer column
  std::vector<std::int64_t> out;
  out.reserve(count_);
  has_null = false;
  Cursor at;
  read(at, count_, [&](const std::vector<KeyField>& fields) {
    if (fields[0].null) {
      has_null = true;
    } else {
      out.push_back(fields[0].integer);
    }
  });
  return out;
}

std::vector<std::string> KeyList::texts(std::size_t most) const {
  std::vector<std::string> out;
  Cursor at;
  read(at, most, [&](const std::vector<KeyField>& fields) {
    std::string text = "(";
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) text += ',';
      const KeyField& f = fields[i];
      if (f.null) continue;
      if (order_[i] == KeyOrder::Integer) {
        text += std::to_string(f.integer);
      } else {
        append_record_field(text, f.bytes);
      }
    }
    out.push_back(text + ")");
  });
  return out;
}

}  // namespace tidemark
