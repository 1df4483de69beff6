// Planning grouped GEMMs from sizes and hints alone (plan/grouped_surrogate.hpp): the surrogate
// each form is costed on, the grid bound against the units any group data can give, and plans
// that never touch the group data (device memory for the API's calls).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "../scheduler/test_helpers.hpp"
#include "tilecast/plan/gemm_plan.hpp"
#include "tilecast/plan/grouped_surrogate.hpp"
#include "tilecast/plan/simulator.hpp"

namespace tilecast::plan {
namespace {

// Planning must not read group data: a pointer no process may read makes any read crash the test.
const int32_t* const kUnreadable = reinterpret_cast<const int32_t*>(0x10);

TileConfig tiles(uint32_t bm, uint32_t bn, ClusterShape cs = {}) {
  TileConfig c;
  c.block_m = bm;
  c.block_n = bn;
  c.block_k = 64;
  c.cluster = cs;
  return c;
}

uint64_t simulated_units(const GemmProblem& p, const TileConfig& c) {
  SimOptions o;
  o.check = false;
  const LaunchSpec one{c, 1};
  return simulate(p, {&one, 1}, o).stats.units;
}

TEST(GroupedSurrogate, SpreadsTheSizesEvenlyAsDocumented) {
  PlanningProblem s = planning_problem(mgrouped_contiguous_desc(ContiguousLayout::kOffsets, 1003, 256, 512, 8, DType::kBF16));
  ASSERT_EQ(s.data.size(), 9u);
  EXPECT_EQ(s.data.front(), 0);
  EXPECT_EQ(s.data.back(), 1003);
  for (size_t g = 0; g < 8; ++g) EXPECT_EQ(s.data[g + 1] - s.data[g], g < 3 ? 126 : 125) << g;  // 1003 = 8 x 125 + 3

  s = planning_problem(mgrouped_contiguous_desc(ContiguousLayout::kRowIndex, 1024, 256, 512, 3, DType::kBF16));
  ASSERT_EQ(s.data.size(), 1024u);
  // 8 runs of 128 rows over 3 experts: runs 0-2 -> 0, 3-5 -> 1, 6-7 -> 2; no padding.
  for (uint32_t r = 0; r < 1024; ++r) EXPECT_EQ(s.data[r], static_cast<int32_t>((r / 128) * 3 / 8)) << r;

  // Masked: 192 x [0.7, 1.3) evenly, expert g at 192 x (0.7 + 0.6 (g + 0.5) / 32); the mean stays
  // the hint and the counts fall all over a 128-row block, so clusters along M meet phantoms.
  s = planning_problem(mgrouped_masked_desc(4096, 4096, 7168, 32, 192, DType::kBF16));
  ASSERT_EQ(s.data.size(), 32u);
  double sum = 0;
  std::set<int32_t> in_block;
  for (uint32_t g = 0; g < 32; ++g) {
    EXPECT_NEAR(s.data[g], 192 * (0.7 + 0.6 * (g + 0.5) / 32), 0.5) << g;
    if (g > 0) {
      EXPECT_GT(s.data[g], s.data[g - 1]) << g;
    }
    sum += s.data[g];
    in_block.insert(s.data[g] % 128 == 0 ? 0 : (s.data[g] % 128 <= 64 ? 1 : 2));
  }
  EXPECT_NEAR(sum / 32, 192.0, 0.5);
  EXPECT_EQ(in_block.size(), 2u) << "counts in both halves of a block";
  // Clamped to max_m.
  s = planning_problem(mgrouped_masked_desc(200, 4096, 7168, 4, 200, DType::kBF16));
  for (int32_t v : s.data) EXPECT_LE(v, 200);

  // K-grouped: whole 8-column units (the sizes the kernel takes), 125 of them over 3 groups; the
  // 3 columns of 1003 past the last unit go to none.
  s = planning_problem(kgrouped_desc(4096, 7168, 1000, 3, DType::kFP32, true));
  EXPECT_EQ(s.data, (std::vector<int32_t>{336, 336, 328}));
  EXPECT_EQ(s.problem().group_data, s.data.data());
  s = planning_problem(kgrouped_desc(4096, 7168, 8328, 32, DType::kFP32, true));
  int64_t k_sum = 0;
  for (int32_t v : s.data) {
    EXPECT_EQ(v % static_cast<int32_t>(kKGroupAlignment), 0) << v;
    k_sum += v;
  }
  EXPECT_EQ(k_sum, 8328);
  EXPECT_EQ(planning_problem(kgrouped_desc(4096, 7168, 1003, 3, DType::kFP32, true)).data,
            (std::vector<int32_t>{336, 336, 328}));

  s = planning_problem(dense_desc(128, 128, 128, 2, DType::kBF16, false));
  EXPECT_TRUE(s.data.empty());
  EXPECT_EQ(s.problem().group_data, nullptr);
}

TEST(GroupedSurrogate, MaxUnitsBoundsEveryGroupDataOfTheSizes) {
  std::mt19937_64 rng(42);
  const auto uniform = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  for (int i = 0; i < 3000; ++i) {
    const ClusterShape cs = kClusterShapes[uniform(0, 5)];
    const TileConfig c = tiles(uniform(0, 1) ? 64 : 128, uniform(0, 1) ? 128 : 256, cs);
    GemmProblem p;
    p.n = uniform(1, 1500);
    p.k = uniform(1, 300);
    p.num_groups = uniform(1, 12);
    std::vector<int32_t> data;
    bool exact = true;
    switch (uniform(0, 3)) {
      case 0: {  // offsets: random sizes, often tiny, sometimes empty
        p.type = GemmType::kMGroupedContiguous;
        p.contiguous_layout = ContiguousLayout::kOffsets;
        data.push_back(0);
        for (uint32_t g = 0; g < p.num_groups; ++g)
          data.push_back(data.back() + static_cast<int32_t>(uniform(0, 3) == 0 ? 0 : uniform(1, uniform(0, 1) ? 9 : 700)));
        p.m = static_cast<uint32_t>(data.back()) + uniform(0, 1) * uniform(0, 50);  // rows past the last expert
        if (p.m == 0) p.m = 1;
        exact = false;
        break;
      }
      case 1: {  // masked: counts up to max_m
        p.type = GemmType::kMGroupedMasked;
        p.m = uniform(1, 600);
        for (uint32_t g = 0; g < p.num_groups; ++g) data.push_back(static_cast<int32_t>(uniform(0, p.m)));
        exact = false;
        break;
      }
      case 2: {  // k-grouped: the units do not depend on K
        p.type = GemmType::kKGroupedContiguous;
        p.m = uniform(1, 600);
        p.k = 0;
        for (uint32_t g = 0; g < p.num_groups; ++g) data.push_back(static_cast<int32_t>(uniform(0, 200))), p.k += data.back();
        if (p.k == 0) data[0] = 1, p.k = 1;
        break;
      }
      default: {  // row index: one grid over every row, padding blocks included
        p.type = GemmType::kMGroupedContiguous;
        p.contiguous_layout = ContiguousLayout::kRowIndex;
        for (uint32_t g = 0; g < p.num_groups; ++g) {
          const uint32_t rows = uniform(0, 300), padded = (rows + 127) / 128 * 128;
          for (uint32_t r = 0; r < padded; ++r) data.push_back(r < rows ? static_cast<int32_t>(g) : -1);
        }
        if (data.empty()) data.assign(128, -1);
        p.m = static_cast<uint32_t>(data.size());
        break;
      }
    }
    p.group_data = data.data();
    GemmProblem sizes = p;
    sizes.group_data = kUnreadable;  // max_units reads sizes only
    const uint64_t bound = max_units(sizes, c);
    const uint64_t units = simulated_units(p, c);
    ASSERT_LE(units, bound) << "type " << static_cast<int>(p.type) << " m " << p.m << " n " << p.n << " groups "
                            << p.num_groups << " block " << c.block_m << " cluster " << cs.m << "x" << cs.n;
    // Row-index and k-grouped grids hold no empty unit (k-grouped units exist even at K = 0).
    if (exact && p.type == GemmType::kKGroupedContiguous) {
      ASSERT_EQ(units, bound);
    }
  }
}

TEST(GroupedSurrogate, OffsetsBoundIsReachedWhenEveryExpertEndsInItsOwnPartialUnit) {
  // 4 experts of 129 rows, 128-row units: 2 units each, 8 in all = floor((516 + 4 x 127) / 128).
  std::vector<int32_t> offsets = {0, 129, 258, 387, 516};
  const GemmProblem p =
      test::grouped(GemmType::kMGroupedContiguous, 516, 128, 64, 4, offsets, ContiguousLayout::kOffsets);
  EXPECT_EQ(max_units(p, tiles(128, 128)), 8u);
  EXPECT_EQ(simulated_units(p, tiles(128, 128)), 8u);
  // Dense shapes: exact.
  const GemmProblem dense = dense_desc(1000, 700, 64, 3, DType::kBF16, false).problem;
  EXPECT_EQ(max_units(dense, tiles(128, 128, {2, 1})), simulated_units(dense, tiles(128, 128, {2, 1})));
}

TEST(GroupedPlanner, PlansEveryFormWithoutReadingItsGroupData) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  std::vector<GemmDesc> descs = {
      mgrouped_contiguous_desc(ContiguousLayout::kOffsets, 32768, 4096, 7168, 8, DType::kBF16),
      mgrouped_contiguous_desc(ContiguousLayout::kRowIndex, 32768, 7168, 2048, 8, DType::kBF16),
      mgrouped_masked_desc(4096, 4096, 7168, 32, 192, DType::kBF16),
      mgrouped_masked_desc(1024, 7168, 2048, 6, 20, DType::kFP32),
      kgrouped_desc(4096, 7168, 16384, 4, DType::kFP32, true),
      kgrouped_desc(7168, 2048, 30000, 8, DType::kBF16, false)};
  for (GemmDesc& d : descs) {
    d.problem.group_data = kUnreadable;
    const GemmPlan p = plan_gemm(d, h200);
    EXPECT_EQ(p.main.kernel.type, d.problem.type);
    EXPECT_EQ(p.main.kernel.has_c, d.has_c);
    EXPECT_EQ(gemm_geometry_error(p.main.kernel), nullptr);
    // A persistent launch: every cluster that fits, as these sizes allow more units than that.
    EXPECT_EQ(p.main.clusters, h200.clusters_for(p.main.kernel.cluster.size())) << p.describe();
    EXPECT_GT(p.cost.total_us, 0);
  }
}

TEST(GroupedPlanner, GridNeverExceedsTheUnitsAnyGroupDataCanGive) {
  // 2 experts of at most 64 rows, one 128-wide column of tiles: 2 units, whatever the counts.
  GemmDesc d = mgrouped_masked_desc(64, 128, 256, 2, 10, DType::kBF16);
  d.problem.group_data = kUnreadable;
  GemmConfig one_by_one;
  one_by_one.cluster_m = one_by_one.cluster_n = 1;
  one_by_one.block_m = 64;
  one_by_one.block_n = 128;
  EXPECT_EQ(plan_gemm(d, DeviceFacts::h200_model(), one_by_one).main.clusters, 2u);
  // k-grouped: groups x tiles, exactly.
  GemmDesc k = kgrouped_desc(256, 256, 640, 3, DType::kFP32, false);
  one_by_one.block_m = 128;
  EXPECT_EQ(plan_gemm(k, DeviceFacts::h200_model(), one_by_one).main.clusters, 3u * 2 * 2);
}

TEST(GroupedPlanner, MaskedPlanFollowsTheExpectedRows) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  // Decode: 20 rows per expert of a 1024-row buffer fit one 64-row block.
  const GemmPlan few = plan_gemm(mgrouped_masked_desc(1024, 4096, 7168, 32, 20, DType::kBF16), h200);
  EXPECT_EQ(few.main.kernel.block_m, 64u) << few.describe();
  const GemmPlan many = plan_gemm(mgrouped_masked_desc(1024, 4096, 7168, 32, 1000, DType::kBF16), h200);
  EXPECT_GT(many.cost.total_us, few.cost.total_us * 2) << "50x the rows";
  // Memory-bound: 32 experts' B (4096 x 7168 BF16 each) through HBM at least once.
  EXPECT_GE(few.cost.total_us, 32.0 * 4096 * 7168 * 2 / 4.2e12 * 1e6 * 0.999);
  GemmDesc bad = mgrouped_masked_desc(1024, 4096, 7168, 32, 2000, DType::kBF16);
  EXPECT_THROW(plan_gemm(bad, h200), Error);
}

TEST(GroupedPlanner, KGroupedHbmTermCountsEachGroupsOwnColumns) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  // 4 groups over K = 16384: A and B once (K columns in all, not per group), at the rate operand
  // reads reach (70% of the copy rate, plan_cost.cpp); D per group in FP32, read and written when
  // accumulating, at the copy rate.
  const GemmPlan p = plan_gemm(kgrouped_desc(4096, 7168, 16384, 4, DType::kFP32, true), h200);
  const double operands = (4096.0 + 7168.0) * 16384 * 2, d = 4.0 * 4096 * 7168 * 4 * 2;
  EXPECT_NEAR(p.cost.hbm_us, (operands / 0.70 + d) / h200.hbm_tb_per_s / 1e12 * 1e6, 1e-6 * p.cost.hbm_us);
}

TEST(GroupedPlanner, KGroupedBoxesAreChargedOffALineAndTakeNoClusterOf4) {
  // The kgrouped suite's shapes (bench/results/2026-12-01-h200-grouped.md, cluster compare): 2x1
  // was best or within 3% on all four, 1x1 25-35% slower (the groups' boxes start off a line, so
  // multicast pays), 4x1 and 2x2 5-20% slower. K = 33408 has rows on a line, its groups' starts not.
  // DeepSeek-V3's 32 groups over K = 8328: 2x1 1.9% and 4.7% faster than 1x1, which the tie order
  // took while the terms put 2x1 ahead by less than the tie band
  // (bench/results/2026-12-03-h200-widths-kgrouped-clusters.md, run C).
  const DeviceFacts h200 = DeviceFacts::h200_model();
  struct Shape {
    uint32_t m, n, k, groups;
  };
  for (const Shape& s : {Shape{4096, 7168, 16864, 4}, Shape{7168, 2048, 15464, 4}, Shape{4096, 7168, 35944, 8},
                         Shape{7168, 2048, 33408, 8}, Shape{4096, 7168, 8328, 32}, Shape{7168, 2048, 8328, 32}}) {
    GemmDesc d = kgrouped_desc(s.m, s.n, s.k, s.groups, DType::kFP32, true);
    assume_padded_rows(d);
    const GemmPlan p = plan_gemm(d, h200);
    EXPECT_EQ(p.main.kernel.cluster, (ClusterShape{2, 1})) << s.m << "x" << s.n << " k" << s.k << ": " << p.describe();
    EXPECT_NEAR(p.cost.l2_line_bytes, 1.875 * static_cast<double>(p.cost.l2_to_sm_bytes), 1.0) << "16 bytes off a line";
    GemmConfig four;
    four.cluster_m = 4;
    four.cluster_n = 1;
    EXPECT_EQ(plan_gemm(d, h200, four).main.kernel.cluster, (ClusterShape{4, 1})) << "asked for, it is planned";
  }
}

}  // namespace
}  // namespace tilecast::plan
