// The exact overlap test of strided views (api/view_overlap.hpp) against brute force: the set of
// bytes each view covers, intersected.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "api/view_overlap.hpp"

namespace tilecast::api {
namespace {

// Small enough that brute force is instant, large enough for several batches of several rows.
constexpr uint64_t kArena = 1024;
constexpr int kRandomPairs = 200000;

std::vector<bool> bytes_covered(const StridedBytes& v) {
  std::vector<bool> covered(kArena * 2, false);
  for (uint64_t b = 0; b < v.batches; ++b)
    for (uint64_t r = 0; r < v.rows; ++r)
      for (uint64_t c = 0; c < v.width; ++c) covered[v.base + b * v.batch_step + r * v.row_step + c] = true;
  return covered;
}

bool brute_force_overlap(const StridedBytes& x, const StridedBytes& y) {
  const std::vector<bool> cx = bytes_covered(x), cy = bytes_covered(y);
  for (size_t i = 0; i < cx.size(); ++i)
    if (cx[i] && cy[i]) return true;
  return false;
}

// A random view inside the arena. Mostly with steps that keep its rows apart and its batches
// apart (what check_view guarantees of a matrix view), else with any steps (the test is exact for
// those too); interleaving with another view is common at these sizes.
StridedBytes random_view(std::mt19937_64& rng) {
  const auto pick = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); };
  const bool any_steps = pick(0, 3) == 0;
  StridedBytes v;
  v.width = pick(1, 24);
  v.rows = pick(1, 6);
  v.row_step = v.rows > 1 ? pick(any_steps ? 1 : v.width, v.width + 40) : 0;
  v.batches = pick(1, 4);
  const uint64_t block = (v.rows - 1) * v.row_step + v.width;
  v.batch_step = v.batches > 1 ? pick(any_steps ? 1 : block, block + 60) : 0;
  v.base = pick(0, kArena / 4);
  return v;
}

TEST(ViewOverlap, MatchesBruteForceOnRandomViews) {
  std::mt19937_64 rng(13);
  int overlapping = 0, interleaved_disjoint = 0;
  for (int i = 0; i < kRandomPairs; ++i) {
    const StridedBytes x = random_view(rng), y = random_view(rng);
    const bool expected = brute_force_overlap(x, y);
    ASSERT_EQ(overlap(x, y), expected) << "x base " << x.base << " " << x.batches << "x(" << x.rows << " rows step "
                                       << x.row_step << ", width " << x.width << ") step " << x.batch_step << "; y base "
                                       << y.base << " " << y.batches << "x(" << y.rows << " rows step " << y.row_step
                                       << ", width " << y.width << ") step " << y.batch_step;
    ASSERT_EQ(overlap(y, x), expected) << "overlap must be symmetric";
    overlapping += expected;
    // Disjoint although the bounding spans meet: the case a span test would wrongly refuse.
    interleaved_disjoint += !expected && std::max(x.base, y.base) < std::min(x.end(), y.end());
  }
  // Both outcomes, and the interleaved kind, are well represented (not a vacuous pass).
  EXPECT_GT(overlapping, kRandomPairs / 10);
  EXPECT_GT(interleaved_disjoint, kRandomPairs / 20);
}

MatrixView view_at(uintptr_t addr, int64_t rows, int64_t cols, int64_t ld, int64_t batch = 1, int64_t batch_stride = 0) {
  MatrixView v;
  v.data = reinterpret_cast<void*>(addr);
  v.dtype = DType::kBF16;
  v.rows = rows;
  v.cols = cols;
  v.row_stride = ld;
  v.batch = batch;
  v.batch_stride = batch_stride;
  return v;
}

TEST(ViewOverlap, InterleavedViewsOfOneBufferAreDisjoint) {
  constexpr uintptr_t kBase = 0x100000;
  // The left and right halves of each row of a 256 x 128 buffer.
  EXPECT_FALSE(overlap(bytes_of(view_at(kBase, 256, 64, 128)), bytes_of(view_at(kBase + 64 * 2, 256, 64, 128))));
  // The even and the odd rows.
  EXPECT_FALSE(overlap(bytes_of(view_at(kBase, 128, 128, 256)), bytes_of(view_at(kBase + 128 * 2, 128, 128, 256))));
  // The even and the odd batches of a batch of 8.
  EXPECT_FALSE(overlap(bytes_of(view_at(kBase, 64, 64, 64, 4, 2 * 64 * 64)),
                       bytes_of(view_at(kBase + 64 * 64 * 2, 64, 64, 64, 4, 2 * 64 * 64))));
  // One element further, and they share a column.
  EXPECT_TRUE(overlap(bytes_of(view_at(kBase, 256, 65, 128)), bytes_of(view_at(kBase + 64 * 2, 256, 64, 128))));
  // Shifted by one row: the odd rows meet the even ones' next row.
  EXPECT_TRUE(overlap(bytes_of(view_at(kBase, 128, 129, 256)), bytes_of(view_at(kBase + 128 * 2, 128, 128, 256))));
  // Only the last element of one touches the first of the other.
  EXPECT_TRUE(overlap(bytes_of(view_at(kBase, 4, 64, 64)), bytes_of(view_at(kBase + (4 * 64 - 1) * 2, 1, 8, 8))));
  EXPECT_FALSE(overlap(bytes_of(view_at(kBase, 4, 64, 64)), bytes_of(view_at(kBase + 4 * 64 * 2, 1, 8, 8))));
}

TEST(ViewOverlap, LargeInterleavedViewsAreCheckedQuickly) {
  // 2^20 rows each: the walk is one step per row, well under a second even unoptimised.
  constexpr int64_t kRows = int64_t{1} << 20;
  const MatrixView even = view_at(0x100000, kRows, 64, 128), odd = view_at(0x100000 + 128, kRows, 64, 128);
  EXPECT_FALSE(overlap(bytes_of(even), bytes_of(odd)));
}

}  // namespace
}  // namespace tilecast::api
