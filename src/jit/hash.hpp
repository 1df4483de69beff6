// A 128-bit FNV-1a hash for cache keys: deterministic across machines, builds and runs (no seeds,
// no pointer values), fast enough for kilobytes of source. Not cryptographic: the cache trusts its
// own directory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tilecast::jit {

struct Hash128 {
  uint64_t hi = 0;
  uint64_t lo = 0;

  std::string hex() const;  // 32 lowercase hex digits, hi first
  friend bool operator==(const Hash128&, const Hash128&) = default;
};

class Fnv128 {
 public:
  Fnv128();
  void update(const void* data, size_t bytes);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // A labelled, length-prefixed field: field("a", "bc") and field("ab", "c") hash differently.
  void field(std::string_view label, std::string_view value);
  Hash128 digest() const;

 private:
  unsigned __int128 state_;
};

inline Hash128 fnv128(std::string_view text) {
  Fnv128 h;
  h.update(text);
  return h.digest();
}

}  // namespace tilecast::jit
