#include "jit/hash.hpp"

namespace tilecast::jit {
namespace {

// FNV-1a 128-bit parameters (offset basis and prime 2^88 + 2^8 + 0x3b).
constexpr unsigned __int128 kOffsetBasis =
    (static_cast<unsigned __int128>(0x6c62272e07bb0142ull) << 64) | 0x62b821756295c58dull;
constexpr unsigned __int128 kPrime = (static_cast<unsigned __int128>(0x0000000001000000ull) << 64) |
                                     0x000000000000013bull;

void put_u64_le(Fnv128& h, uint64_t v) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(v >> (8 * i));
  h.update(bytes, sizeof(bytes));
}

}  // namespace

std::string Hash128::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(hi >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(lo >> (4 * i)) & 0xf];
  }
  return out;
}

Fnv128::Fnv128() : state_(kOffsetBasis) {}

void Fnv128::update(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  unsigned __int128 s = state_;
  for (size_t i = 0; i < bytes; ++i) {
    s ^= p[i];
    s *= kPrime;
  }
  state_ = s;
}

void Fnv128::field(std::string_view label, std::string_view value) {
  put_u64_le(*this, label.size());
  update(label);
  put_u64_le(*this, value.size());
  update(value);
}

Hash128 Fnv128::digest() const {
  return Hash128{static_cast<uint64_t>(state_ >> 64), static_cast<uint64_t>(state_)};
}

}  // namespace tilecast::jit
