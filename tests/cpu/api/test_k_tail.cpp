// The k-grouped tail clear (kernels/gemm_sm90/k_tail.cuh) on the CPU: all the clearers' stores
// played over A and B tiles in the 128-byte swizzle, for every count of valid columns 1..63. After
// them exactly the columns past the group's end are zero in every row, and nothing else changed:
// the swizzle arithmetic is where a clear would silently miss or hit the wrong bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tilecast/device/kernels/gemm_sm90/k_tail.cuh"

namespace tilecast {
namespace {

// Logical element (row, col) of a 64-column BF16 tile sits at 16-bit word
// row * 64 + ((col / 8) ^ (row % 8)) * 8 + col % 8: the TMA's and wgmma's 128-byte swizzle.
uint32_t word_of(uint32_t row, uint32_t col) { return row * 64 + (((col / 8) ^ (row % 8)) * 8) + col % 8; }

// A nonzero marker for each logical element.
uint16_t marker(bool in_a, uint32_t row, uint32_t col) {
  return static_cast<uint16_t>(0x8000u | (in_a ? 0x4000u : 0u) | ((row % 128) << 6) | col);
}

template <uint32_t kRowsA, uint32_t kRowsB>
void check_every_valid_count() {
  for (uint32_t valid = 1; valid < 64; ++valid) {
    std::vector<uint16_t> a(kRowsA * 64), b(kRowsB * 64);
    for (uint32_t r = 0; r < kRowsA; ++r)
      for (uint32_t c = 0; c < 64; ++c) a[word_of(r, c)] = marker(true, r, c);
    for (uint32_t r = 0; r < kRowsB; ++r)
      for (uint32_t c = 0; c < 64; ++c) b[word_of(r, c)] = marker(false, r, c);
    std::vector<int> stores(kRowsA * 8 + kRowsB * 8, 0);
    for (uint32_t clearer = 0; clearer < kTailClearers; ++clearer) {
      k_tail_stores<kRowsA, kRowsB>(valid, clearer, [&](bool in_a, uint32_t offset, uint32_t first) {
        ASSERT_EQ(offset % 16, 0u) << "16-byte chunks";
        ASSERT_LT(first, 8u);
        ASSERT_LT(offset, (in_a ? kRowsA : kRowsB) * 128u);
        ++stores[(in_a ? 0 : kRowsA * 8) + offset / 16];
        uint16_t* tile = in_a ? a.data() : b.data();
        for (uint32_t e = first; e < 8; ++e) tile[offset / 2 + e] = 0;
      });
    }
    for (int s : stores) ASSERT_LE(s, 1) << "a chunk stored twice (valid " << valid << ")";
    for (uint32_t r = 0; r < kRowsA + kRowsB; ++r) {
      const bool in_a = r < kRowsA;
      const uint32_t row = in_a ? r : r - kRowsA;
      const std::vector<uint16_t>& tile = in_a ? a : b;
      for (uint32_t c = 0; c < 64; ++c) {
        const uint16_t v = tile[word_of(row, c)];
        if (c >= valid)
          ASSERT_EQ(v, 0) << (in_a ? "A" : "B") << " row " << row << " col " << c << " valid " << valid << " ("
                          << kRowsA << "x" << kRowsB << ")";
        else
          ASSERT_EQ(v, marker(in_a, row, c)) << (in_a ? "A" : "B") << " row " << row << " col " << c << " valid "
                                             << valid;
      }
    }
  }
}

TEST(KTailClear, ClearsExactlyTheColumnsPastTheGroupsEndInBothTiles) {
  check_every_valid_count<64, 64>();
  check_every_valid_count<64, 256>();
  check_every_valid_count<128, 96>();
  check_every_valid_count<128, 144>();
  check_every_valid_count<128, 176>();
  check_every_valid_count<128, 256>();
}

}  // namespace
}  // namespace tilecast
