#include "core/text/glob.h"

#include <vector>

namespace tidemark {
namespace {

// `text` cut into its UTF-8 characters: `?` is one character, as `_` is
// to PostgreSQL, whatever its bytes. A stray byte is a character of its own.
std::vector<std::string_view> characters(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = 1;
    while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

// One element of a pattern: a literal character, any one character, or
// any run of them.
struct GlobItem {
  enum class Kind { Literal, One, Any } kind;
  std::string_view literal;
};

std::vector<GlobItem> parse_glob(std::string_view pattern) {
  std::vector<GlobItem> items;
  const std::vector<std::string_view> chars = characters(pattern);
  for (std::size_t i = 0; i < chars.size(); ++i) {
    if (chars[i] == "*") {
      items.push_back({GlobItem::Kind::Any, {}});
    } else if (chars[i] == "?") {
      items.push_back({GlobItem::Kind::One, {}});
    } else if (chars[i] == "\\" && i + 1 < chars.size()) {
      items.push_back({GlobItem::Kind::Literal, chars[++i]});
    } else {
      items.push_back({GlobItem::Kind::Literal, chars[i]});
    }
  }
  return items;
}

}  // namespace

bool glob_matches(std::string_view pattern, std::string_view name) {
  const std::vector<GlobItem> items = parse_glob(pattern);
  const std::vector<std::string_view> chars = characters(name);
  // The classic backtracking walk: only the last `*` is ever returned to,
  // so the cost stays linear in name times pattern at worst.
  std::size_t p = 0;
  std::size_t n = 0;
  std::size_t star = std::string_view::npos;
  std::size_t star_name = 0;
  while (n < chars.size()) {
    if (p < items.size() && items[p].kind == GlobItem::Kind::Any) {
      star = p++;
      star_name = n;
    } else if (p < items.size() && (items[p].kind == GlobItem::Kind::One || items[p].literal == chars[n])) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++star_name;
    } else {
      return false;
    }
  }
  while (p < items.size() && items[p].kind == GlobItem::Kind::Any) ++p;
  return p == items.size();
}

std::string glob_to_like(std::string_view pattern) {
  std::string like;
  for (const GlobItem& item : parse_glob(pattern)) {
    switch (item.kind) {
      case GlobItem::Kind::Any: like += '%'; break;
      case GlobItem::Kind::One: like += '_'; break;
      case GlobItem::Kind::Literal:
        if (item.literal == "%" || item.literal == "_" || item.literal == "\\") like += '\\';
        like += item.literal;
        break;
    }
  }
  return like;
}

}  // namespace tidemark
