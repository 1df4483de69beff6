// The LRU model of what a walk reads from HBM (src/plan/l2_reuse.cpp): its bounds, its two limits
// (an L2 that holds everything, one that holds nothing), the H200's measured bytes on 8192^3, long
// squares, grouped walks and serpentine K.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "tilecast/device/scheduler/tile_scheduler.cuh"
#include "tilecast/plan/l2_reuse.hpp"

namespace tilecast::plan {
namespace {

GemmProblem dense(uint32_t m, uint32_t n, uint32_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

TileConfig tiles(uint32_t block_m, uint32_t block_n, uint32_t band, ClusterShape cluster = {}) {
  TileConfig t;
  t.block_m = block_m;
  t.block_n = block_n;
  t.cluster = cluster;
  t.swizzle = band;
  return t;
}

double operands(const GemmProblem& p) { return (static_cast<double>(p.m) + p.n) * p.k * 2; }

constexpr uint64_t kH200L2 = uint64_t{60} << 20;

// Between each operand read once and every unit reading its own rows and columns, on odd and
// even shapes, clusters and bands.
TEST(L2Reuse, BytesLieBetweenOnceAndEveryUnitItsOwn) {
  const GemmProblem problems[] = {dense(4096, 4096, 7168), dense(3000, 5000, 1000), dense(4097, 4097, 4104),
                                  dense(257, 8192, 520)};
  for (const GemmProblem& p : problems)
    for (uint32_t band : {1u, 3u, 8u, 16u, 64u})
      for (ClusterShape cs : {ClusterShape{1, 1}, ClusterShape{2, 1}, ClusterShape{1, 2}})
        for (uint32_t resident : {1u, 30u, 132u}) {
          const TileConfig t = tiles(128, 128, band, cs);
          const double units = static_cast<double>((p.m + 127) / 128 + cs.m - 1) / cs.m * ((p.n + 127) / 128 + cs.n - 1) / cs.n;
          const double every_unit_alone = units * (128.0 * cs.m + 128.0 * cs.n) * p.k * 2;
          for (uint64_t l2 : {uint64_t{0}, uint64_t{4} << 20, kH200L2}) {
            const double bytes = operand_hbm_bytes(p, t, resident, l2);
            EXPECT_GE(bytes, operands(p)) << p.m << "x" << p.n << "x" << p.k << " band " << band;
            EXPECT_LE(bytes, every_unit_alone) << p.m << "x" << p.n << "x" << p.k << " band " << band;
          }
        }
}

// An L2 that holds both operands reads each once, whatever the order; one that holds nothing
// reads a unit's rows and columns for every unit.
TEST(L2Reuse, TheTwoLimits) {
  const GemmProblem p = dense(2048, 3072, 4096);
  for (uint32_t band : {1u, 2u, 8u, 16u}) {
    EXPECT_DOUBLE_EQ(operand_hbm_bytes(p, tiles(128, 256, band), 132, uint64_t{1} << 40), operands(p)) << band;
    const double units = (2048 / 128) * (3072 / 256);
    EXPECT_DOUBLE_EQ(operand_hbm_bytes(p, tiles(128, 256, band), 132, 0), units * (128 + 256) * 4096 * 2) << band;
  }
}

// Nsight Compute's dram__bytes_read of one call, 8192^3 with 128x256 tiles on 132 SMs
// (bench/results/2026-12-04-h200-last-wave.md, run C): 2.345, 1.493 and 1.226 GB at bands 4, 8
// and 16. The model is within 3% of each and in their order. (Band 1 measured 2.897 GB, which
// the model puts at 2.3: a wave then spans four rows of tiles, whose CTAs drift apart in K.)
TEST(L2Reuse, MatchesTheH200sHbmBytesOn8192Cubed) {
  const GemmProblem p = dense(8192, 8192, 8192);
  const double at4 = operand_hbm_bytes(p, tiles(128, 256, 4), 132, kH200L2);
  const double at8 = operand_hbm_bytes(p, tiles(128, 256, 8), 132, kH200L2);
  const double at16 = operand_hbm_bytes(p, tiles(128, 256, 16), 132, kH200L2);
  EXPECT_NEAR(at4 / 2.345e9, 1.0, 0.03);
  EXPECT_NEAR(at8 / 1.493e9, 1.0, 0.03);
  EXPECT_NEAR(at16 / 1.226e9, 1.0, 0.03);
  EXPECT_LT(at16, at8);
  EXPECT_LT(at8, at4);
}

// The rows and columns of every wave of `resident` units, each read once over all of K.
double each_wave_once(const GemmProblem& p, const TileConfig& t, uint32_t resident) {
  TileScheduler scheduler(p, t, 0, 0);
  double bytes = 0;
  std::set<uint32_t> rows, cols;
  const auto close_wave = [&] {
    bytes += (static_cast<double>(rows.size()) * t.block_m + static_cast<double>(cols.size()) * t.block_n) * p.k * 2;
    rows.clear();
    cols.clear();
  };
  for (uint32_t u = 0; scheduler.seek(u); ++u) {
    const TileWork w = scheduler.work_of(0, 0);
    rows.insert(w.m_block);
    cols.insert(w.n_block);
    if ((u + 1) % resident == 0) close_wave();
  }
  close_wave();
  return bytes;
}

// On long squares in the H200's L2 the model reads exactly each wave's rows and columns once, at
// bands 8 to 32: nothing a wave reads survives to the next, and nothing is read twice within one.
// So where the chip reads more (12288^3 and 16384^3 at band 16: 1.4-1.5x and 1.6-2.4x, where 8192^3
// matched; bench/results/2026-12-05-h200-grouped-bands-l2-drift.md), it reads blocks again within
// a wave, which units in lockstep do not.
TEST(L2Reuse, LongSquaresReadEachWaveOnce) {
  for (uint32_t size : {8192u, 12288u, 16384u})
    for (uint32_t band : {8u, 16u, 32u}) {
      const GemmProblem p = dense(size, size, size);
      const TileConfig t = tiles(128, 256, band);
      EXPECT_NEAR(operand_hbm_bytes(p, t, 132, kH200L2) / each_wave_once(p, t, 132), 1.0, 1e-9)
          << size << " band " << band;
    }
}

// Grouped walks: each group's grid after the last, each group's operands its own. Groups of equal
// sizes read alike whatever the type that holds them (a batch, masked buffers, K columns); one
// expert reads what the dense problem reads; and a batch whose groups each take whole waves reads
// its groups' dense bytes, each alone (L2 holds nothing one group can use for the next).
TEST(L2Reuse, GroupedWalksReadEachGroupsOwnOperands) {
  const uint32_t m = 2048, n = 3072, k = 4096, groups = 3;
  GemmProblem batched = dense(m, n, k);
  batched.type = GemmType::kBatched;
  batched.num_groups = groups;
  const std::vector<int32_t> counts(groups, static_cast<int32_t>(m));
  GemmProblem masked = batched;
  masked.type = GemmType::kMGroupedMasked;
  masked.group_data = counts.data();
  const std::vector<int32_t> k_sizes(groups, static_cast<int32_t>(k));
  GemmProblem k_grouped = dense(m, n, k * groups);
  k_grouped.type = GemmType::kKGroupedContiguous;
  k_grouped.num_groups = groups;
  k_grouped.group_data = k_sizes.data();
  const std::vector<int32_t> one_expert{0, static_cast<int32_t>(m)};
  GemmProblem expert = dense(m, n, k);
  expert.type = GemmType::kMGroupedContiguous;
  expert.contiguous_layout = ContiguousLayout::kOffsets;
  expert.num_groups = 1;
  expert.group_data = one_expert.data();
  // 2048 x 3072 in 128 x 256 tiles: 192 units, two whole waves of 96.
  for (uint32_t band : {1u, 4u, 8u, 16u})
    for (uint64_t l2 : {uint64_t{4} << 20, kH200L2}) {
      const TileConfig t = tiles(128, 256, band);
      const double batch_bytes = operand_hbm_bytes(batched, t, 96, l2);
      EXPECT_DOUBLE_EQ(operand_hbm_bytes(masked, t, 96, l2), batch_bytes) << band;
      EXPECT_DOUBLE_EQ(operand_hbm_bytes(k_grouped, t, 96, l2), batch_bytes) << band;
      EXPECT_DOUBLE_EQ(operand_hbm_bytes(expert, t, 96, l2), operand_hbm_bytes(dense(m, n, k), t, 96, l2)) << band;
      EXPECT_DOUBLE_EQ(batch_bytes, groups * operand_hbm_bytes(dense(m, n, k), t, 96, l2)) << band;
      EXPECT_GE(batch_bytes, groups * operands(dense(m, n, k))) << band;
    }
}

// Serpentine K (odd waves walk K backwards, GemmKernelSpec::k_serpentine): each wave starts on
// the K columns the one before ended on, still in L2. On 8192^3 in 128x256 tiles at bands 16 and
// 32 it reads 15-19% less than forward waves (the H200 read 11% and 16% less: 1.09 against 1.23
// GB, 1.23 against 1.47; bench/results/2026-12-05-h200-serpentine-l2-share.md); the order moves
// nothing where L2 holds everything or nothing, and the bounds hold.
TEST(L2Reuse, SerpentineKReadsWhatTheWaveBeforeLeft) {
  const GemmProblem p = dense(8192, 8192, 8192);
  for (uint32_t band : {16u, 32u}) {
    const TileConfig t = tiles(128, 256, band);
    const double forward = operand_hbm_bytes(p, t, 132, kH200L2);
    const double reversed = operand_hbm_bytes(p, t, 132, kH200L2, true);
    EXPECT_LT(reversed, 0.9 * forward) << band;
    EXPECT_GT(reversed, operands(p)) << band;
    EXPECT_DOUBLE_EQ(operand_hbm_bytes(p, t, 132, uint64_t{1} << 40, true), operands(p)) << band;
    EXPECT_DOUBLE_EQ(operand_hbm_bytes(p, t, 132, 0, true), operand_hbm_bytes(p, t, 132, 0)) << band;
  }
}

TEST(L2Reuse, RefusesWhatItDoesNotModel) {
  GemmProblem no_data = dense(1024, 1024, 1024);
  no_data.type = GemmType::kMGroupedMasked;
  no_data.num_groups = 2;
  EXPECT_THROW(operand_hbm_bytes(no_data, tiles(128, 128, 8), 132, kH200L2), std::invalid_argument);
  GemmProblem split = dense(1024, 1024, 1024);
  split.k_splits = 2;
  EXPECT_THROW(operand_hbm_bytes(split, tiles(128, 128, 8), 132, kH200L2), std::invalid_argument);
  EXPECT_THROW(operand_hbm_bytes(dense(1024, 1024, 1024), tiles(128, 128, 8), 0, kH200L2), std::invalid_argument);
}

}  // namespace
}  // namespace tilecast::plan
