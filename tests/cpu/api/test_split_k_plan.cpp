// The planner and split-K: which problems it splits (the cost model's verdict, with its terms
// printed on failure), what a split plan's kernel is, the k_splits override and its checks, and the
// reduce kernels a warm-up compiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "api/split_k.hpp"
#include "api/warm.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {
namespace {

GemmPlan plan_of(int64_t m, int64_t n, int64_t k, const GemmConfig& o = {}) {
  return plan_gemm(dense_desc(m, n, k, 1, DType::kBF16, false), DeviceFacts::h200_model(), o);
}

std::string shape(int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// Few tiles over a long K: one wave of 128-row tiles leaves SMs idle or runs a whole K per SM.
TEST(SplitKPlan, SmallMWithLongKSplits) {
  const int64_t shapes[][3] = {{128, 2112, 7168}, {128, 576, 7168},  {128, 7168, 16384}, {128, 4096, 7168},
                               {1, 4096, 4096},   {255, 576, 7168}, {333, 2112, 7168}};
  for (const auto& s : shapes) {
    const GemmPlan p = plan_of(s[0], s[1], s[2]);
    EXPECT_GT(p.k_splits, 1u) << shape(s[0], s[1], s[2]) << ": " << p.describe();
    EXPECT_TRUE(p.main.kernel.split_k);
    // The slices are summed by the reduce kernel (the GEMM stores FP32 partial sums) or, where one
    // wave of clusters holds every tile, across a cluster (the GEMM keeps D's dtype); never fused.
    if (p.main.kernel.k_cluster > 1) {
      EXPECT_EQ(p.main.kernel.out, DType::kBF16) << p.describe();
      EXPECT_LE(p.cost.waves, 1.0) << p.describe();
    } else {
      EXPECT_EQ(p.main.kernel.out, DType::kFP32) << "partial sums are FP32";
    }
    EXPECT_FALSE(p.main.kernel.fused_reduce) << "auto never fuses the reduce";
    EXPECT_GT(p.cost.reduce_us, 0.0);
  }
}

// The m = 128 rows that the model keeps unsplit, and why: 128x24576x1536 and 128x32768x512 are
// HBM bound already (B alone is 75 and 34 MB: 18 and 8 us at 4.2 TB/s), where a split only adds
// the reduce; 128x7168x2048 and 2x7168x2048 fill 112 SMs unsplit with 64-wide tiles and a split
// saves less than the reduce launch. Measured on the H200 these ran at 0.81-0.97x cuBLASLt.
TEST(SplitKPlan, BandwidthBoundOrFullShapesStayUnsplit) {
  const int64_t shapes[][3] = {{128, 24576, 1536}, {128, 32768, 512}, {128, 7168, 2048}, {2, 7168, 2048}};
  for (const auto& s : shapes) {
    const GemmPlan p = plan_of(s[0], s[1], s[2]);
    EXPECT_EQ(p.k_splits, 1u) << shape(s[0], s[1], s[2]) << ": " << p.describe();
  }
}

TEST(SplitKPlan, LargeProblemsNeverSplit) {
  const GemmPlan big = plan_of(8192, 8192, 8192);
  EXPECT_EQ(big.k_splits, 1u) << big.describe();
  EXPECT_FALSE(big.main.kernel.split_k);
  const int64_t nk[][2] = {{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512},
                           {7168, 16384}, {4096, 7168}, {7168, 2048}};
  for (const auto& x : nk) {
    const GemmPlan p = plan_of(4096, x[0], x[1]);
    EXPECT_EQ(p.k_splits, 1u) << shape(4096, x[0], x[1]) << ": " << p.describe();
  }
}

TEST(SplitKPlan, OverrideForcesOrForbids) {
  GemmConfig off;
  off.k_splits = 1;
  EXPECT_EQ(plan_of(128, 576, 7168, off).k_splits, 1u);
  GemmConfig three;
  three.k_splits = 3;
  three.fused_reduce = 0;
  const GemmDesc with_c = dense_desc(64, 4096, 4096, 2, DType::kBF16, true);
  const GemmPlan p = plan_gemm(with_c, DeviceFacts::h200_model(), three);
  EXPECT_EQ(p.k_splits, 3u);
  EXPECT_EQ(p.desc.problem.k_splits, 3u);
  EXPECT_TRUE(p.main.kernel.split_k);
  EXPECT_FALSE(p.main.kernel.fused_reduce);
  EXPECT_FALSE(p.main.kernel.has_c) << "C is the reduce kernel's";
  EXPECT_TRUE(p.desc.has_c) << "the plan keeps the call's epilogue";
  EXPECT_EQ(p.main.kernel.type, GemmType::kBatched);
  // The tile counters, then 3 slices x 2 batches x 64 rows x 4096 columns of FP32.
  EXPECT_EQ(p.workspace_bytes(), kSplitCounterBytes + 3ull * 2 * 64 * 4096 * 4);
  // Fused, the GEMM applies the epilogue itself: D's dtype, C and the bias are its own; the
  // workspace is the same.
  GemmConfig fused = three;
  fused.fused_reduce = 1;
  const GemmPlan f = plan_gemm(with_c, DeviceFacts::h200_model(), fused);
  EXPECT_TRUE(f.main.kernel.fused_reduce);
  EXPECT_TRUE(f.main.kernel.has_c);
  EXPECT_EQ(f.main.kernel.out, DType::kBF16);
  EXPECT_FALSE(f.geometry().epilogue_loader) << "C is read through pointers, by the tile's last slice";
  EXPECT_EQ(f.workspace_bytes(), p.workspace_bytes());
  EXPECT_NE(f.describe().find("split-K 3 fused"), std::string::npos) << f.describe();
  // A ragged N pads the workspace's rows to 16 bytes.
  GemmConfig two;
  two.k_splits = 2;
  const GemmPlan ragged = plan_of(7, 1001, 3000, two);
  EXPECT_EQ(ragged.workspace_ld(), 1004u);
  EXPECT_EQ(ragged.workspace_bytes(), kSplitCounterBytes + 2ull * 7 * 1004 * 4);
  const GemmPlan own = plan_of(7, 1001, 3000);
  EXPECT_EQ(own.workspace_bytes() == 0, own.k_splits == 1 || own.main.kernel.k_cluster > 1) << own.describe();
}

TEST(SplitKPlan, BadOverridesAreRefusedByName) {
  const auto refused = [](const GemmDesc& d, const GemmConfig& o, const std::string& what) {
    try {
      plan_gemm(d, DeviceFacts::h200_model(), o);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  GemmConfig many;
  many.k_splits = kMaxKSplits + 1;
  refused(dense_desc(128, 576, 7168, 1, DType::kBF16, false), many, "k_splits 33");
  GemmConfig two;
  two.k_splits = 2;
  refused(kgrouped_desc(128, 576, 7168, 4, DType::kFP32, false), two, "split-K is for dense and batched GEMMs only");
  GemmConfig with_companion = two;
  with_companion.companion = 1;
  refused(dense_desc(128, 576, 7168, 1, DType::kBF16, false), with_companion, "companion");
  GemmConfig fused_wide = two;
  fused_wide.fused_reduce = 1;
  fused_wide.block_n = 192;
  refused(dense_desc(128, 4096, 7168, 1, DType::kBF16, false), fused_wide,
          "x192 with 6 stages: fused_reduce takes tiles up to 144 wide");
}

// gemm_spec_error refuses `x` with a message that names `expected` (`what`: the case, on failure).
void expect_spec_error(const GemmKernelSpec& x, const char* expected, const char* what) {
  const char* e = gemm_spec_error(x);
  ASSERT_NE(e, nullptr) << what;
  EXPECT_NE(std::string(e).find(expected), std::string::npos) << e;
}

// The spec's split-K rules: dense or batched, FP32 partial sums, no C, no bias, no companion.
TEST(SplitKPlan, SpecRulesNameWhatIsWrong) {
  GemmKernelSpec s;
  s.split_k = true;
  s.out = DType::kFP32;
  EXPECT_EQ(gemm_spec_error(s), nullptr);
  s.type = GemmType::kBatched;
  EXPECT_EQ(gemm_spec_error(s), nullptr);
  const auto refused = [](const GemmKernelSpec& x, const char* what) { expect_spec_error(x, "split-K", what); };
  GemmKernelSpec x = s;
  x.out = DType::kBF16;
  refused(x, "BF16 partial sums");
  x = s;
  x.has_c = true;
  refused(x, "C in the split kernel");
  x = s;
  x.has_bias = true;
  refused(x, "a bias in the split kernel");
  x = s;
  x.type = GemmType::kKGroupedContiguous;
  refused(x, "k-grouped");
  x = s;
  x.cluster = {2, 2};
  x.dynamic_units = true;
  refused(x, "dynamic units");
  // Fused, the split kernel carries the problem's epilogue; it needs split_k and no swap.
  GemmKernelSpec fused = s;
  fused.fused_reduce = true;
  fused.out = DType::kBF16;
  fused.has_c = fused.has_bias = true;
  EXPECT_EQ(gemm_spec_error(fused), nullptr);
  x = fused;
  x.split_k = false;
  ASSERT_NE(gemm_spec_error(x), nullptr);
  EXPECT_NE(std::string(gemm_spec_error(x)).find("needs split_k"), std::string::npos);
  x = fused;
  x.swap_ab = true;
  x.block_n = 8;
  x.has_c = x.has_bias = false;
  ASSERT_NE(gemm_spec_error(x), nullptr);
  EXPECT_NE(std::string(gemm_spec_error(x)).find("unswapped"), std::string::npos) << gemm_spec_error(x);
  // Only a fused spec's fingerprint and traits carry the field: the others keep theirs.
  EXPECT_NE(spec_fingerprint(fused), spec_fingerprint([&] { GemmKernelSpec y = fused; y.fused_reduce = false; return y; }()));
}

// fused_reduce: 1 plans every split with the fused reduce (tiles up to 144 wide), 0 and -1 with
// the reduce kernel (auto: the fused one measured slower); swapped plans always take the reduce
// kernel; a tile grid with more counters than the workspace keeps is never fused.
TEST(SplitKPlan, FusedReduceOverrideAndAuto) {
  const GemmDesc d = dense_desc(128, 4096, 7168, 1, DType::kBF16, false);
  const DeviceFacts f = DeviceFacts::h200_model();
  for (int choice : {-1, 0, 1}) {
    GemmConfig o;
    o.fused_reduce = choice;
    size_t split = 0;
    for (const GemmPlan& p : rank_plans(d, f, o)) {
      if (p.k_splits == 1) {
        EXPECT_FALSE(p.main.kernel.fused_reduce);
        continue;
      }
      ++split;
      EXPECT_EQ(p.main.kernel.fused_reduce, choice == 1) << p.describe();
      if (p.main.kernel.fused_reduce) { EXPECT_LE(p.main.kernel.block_n, kFusedReduceMaxBlockN) << p.describe(); }
    }
    EXPECT_GT(split, 0u) << "fused_reduce " << choice;
  }
  // m <= 16, n >= 2048: the auto rule swaps, and a swapped split takes the reduce kernel.
  const GemmPlan swapped = plan_gemm(dense_desc(1, 7168, 7168, 1, DType::kBF16, false), f);
  ASSERT_TRUE(swapped.main.kernel.swap_ab);
  ASSERT_GT(swapped.k_splits, 1u);
  EXPECT_FALSE(swapped.main.kernel.fused_reduce);
  // With fused_reduce=1 the auto rule does not swap.
  GemmConfig only_fused;
  only_fused.fused_reduce = 1;
  only_fused.k_splits = 3;
  const GemmPlan unswapped = plan_gemm(dense_desc(1, 4096, 4096, 1, DType::kBF16, false), f, only_fused);
  EXPECT_FALSE(unswapped.main.kernel.swap_ab);
  EXPECT_TRUE(unswapped.main.kernel.fused_reduce);
  // 64x64 tiles of an 8192x8256 D: 16512 tiles, more counters than kSplitCounterSlots.
  GemmConfig big;
  big.fused_reduce = 1;
  big.k_splits = 2;
  big.block_m = 64;
  big.block_n = 64;
  const GemmDesc large = dense_desc(8192, 8256, 8192, 1, DType::kBF16, false);
  GemmKernelSpec tile_64x64;
  tile_64x64.block_m = tile_64x64.block_n = 64;
  tile_64x64.consumer_warpgroups = 1;
  EXPECT_GT(split_counters(large.problem, tile_64x64), uint64_t{kSplitCounterSlots});
  try {
    plan_gemm(large, f, big);
    ADD_FAILURE() << "a fused reduce with too many tile counters was planned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tile counters"), std::string::npos) << e.what();
  }
}

// k_cluster: the slices are the CTAs of one cluster. The kernel keeps the problem's epilogue,
// needs split_k, a 1x1 cluster, no fused reduce and no swap, and 1..8 slices; only a k_cluster
// spec's fingerprint and traits carry the field.
TEST(SplitKPlan, ClusterReduceSpecRules) {
  GemmKernelSpec s;
  s.split_k = true;
  s.k_cluster = 4;
  s.has_c = s.has_bias = true;
  EXPECT_EQ(gemm_spec_error(s), nullptr) << gemm_spec_error(s);
  const auto refused = [](const GemmKernelSpec& x, const char* expected) { expect_spec_error(x, expected, expected); };
  GemmKernelSpec x = s;
  x.split_k = false;
  refused(x, "it needs split_k");
  x = s;
  x.fused_reduce = true;
  refused(x, "pick one");
  x = s;
  x.cluster = {2, 1};
  refused(x, "cluster must be 1x1");
  x = s;
  x.k_cluster = 9;
  refused(x, "k_cluster must be 1..8");
  x = s;
  x.k_cluster = 0;
  refused(x, "k_cluster must be 1..8");
  x = s;
  x.swap_ab = true;
  x.block_n = 8;
  refused(x, "unswapped");
  GemmKernelSpec off = s;
  off.k_cluster = 1;
  off.has_c = off.has_bias = false;
  off.out = DType::kFP32;
  EXPECT_NE(spec_fingerprint(s), spec_fingerprint([&] { GemmKernelSpec y = s; y.k_cluster = 2; return y; }()));
  EXPECT_EQ(spec_fingerprint(off), spec_fingerprint([] {
              GemmKernelSpec y;
              y.split_k = true;
              y.out = DType::kFP32;
              return y;
            }()));
  // Its partial tile lives in shared memory, beside fewer stages; rows padded off a bank multiple.
  const GemmGeometry g = gemm_geometry(s);
  EXPECT_EQ(g.reduce_ld % 32 == 8 || g.reduce_ld % 32 == 24, true) << g.reduce_ld;
  EXPECT_EQ(g.reduce_bytes, s.block_m * g.reduce_ld * 4);
  EXPECT_GE(g.smem.full, g.smem.reduce + g.reduce_bytes);
  EXPECT_NE(g.smem.reduce_full, 0u);
  EXPECT_EQ(gemm_geometry(off).reduce_bytes, 0u);
  EXPECT_LT(deepest_stages(s), deepest_stages(off));
}

// cluster_reduce=1 plans only splits of 2, 4 or 8 slices, each the cluster of its tile's CTAs:
// 1x1 clusters of CTAs along M and N, no workspace, the problem's epilogue in the GEMM, a grid of
// whole clusters that fit on the device. Auto (-1) weighs one only where one wave of clusters
// holds every tile (and picks one for 255x576x7168); 0 never plans one.
TEST(SplitKPlan, ClusterReduceOverrideAndAuto) {
  const DeviceFacts f = DeviceFacts::h200_model();
  const int64_t shapes[][3] = {{255, 576, 7168}, {128, 4096, 7168}, {1, 4096, 4096}, {333, 2112, 7168}};
  for (const auto& sh : shapes) {
    const GemmDesc d = dense_desc(sh[0], sh[1], sh[2], 1, DType::kBF16, true);
    GemmConfig on;
    on.cluster_reduce = 1;
    const std::vector<GemmPlan> plans = rank_plans(d, f, on);
    ASSERT_FALSE(plans.empty());
    for (const GemmPlan& p : plans) {
      const GemmKernelSpec& k = p.main.kernel;
      EXPECT_TRUE(p.k_splits == 2 || p.k_splits == 4 || p.k_splits == 8) << p.describe();
      EXPECT_EQ(k.k_cluster, p.k_splits) << p.describe();
      EXPECT_EQ(p.schedule.k_cluster, p.k_splits) << p.describe();
      EXPECT_EQ(k.cluster, (ClusterShape{1, 1})) << p.describe();
      EXPECT_FALSE(k.swap_ab || k.fused_reduce) << p.describe();
      EXPECT_EQ(k.out, DType::kBF16) << "the problem's epilogue, in the GEMM";
      EXPECT_TRUE(k.has_c);
      EXPECT_EQ(p.workspace_bytes(), 0u) << p.describe();
      EXPECT_LE(p.main.clusters, f.clusters_for(p.k_splits)) << p.describe();
      const uint64_t tiles = uint64_t{ceil_div(d.problem.m, k.block_m)} * ceil_div(d.problem.n, k.block_n);
      EXPECT_LE(p.main.clusters, tiles) << "a cluster per tile at most: " << p.describe();
      EXPECT_NE(p.describe().find("in cluster"), std::string::npos) << p.describe();
    }
    on.k_splits = 4;
    EXPECT_EQ(plan_gemm(d, f, on).main.kernel.k_cluster, 4u);
    for (int choice : {-1, 0}) {
      GemmConfig o;
      o.cluster_reduce = choice;
      for (const GemmPlan& p : rank_plans(d, f, o)) {
        if (choice == 0) { EXPECT_EQ(p.main.kernel.k_cluster, 1u) << p.describe(); }
        if (p.main.kernel.k_cluster > 1) {
          EXPECT_LE(p.cost.waves, 1.0) << "auto: one wave of clusters, " << p.describe();
          EXPECT_EQ(p.main.kernel.k_cluster, p.k_splits) << p.describe();
        }
      }
    }
  }
  EXPECT_GT(plan_gemm(dense_desc(255, 576, 7168, 1, DType::kBF16, false), f).main.kernel.k_cluster, 1u);
  GemmConfig grouped;
  grouped.cluster_reduce = 1;
  GemmDesc masked = dense_desc(128, 4096, 7168, 1, DType::kBF16, false);
  masked.problem.type = GemmType::kMGroupedMasked;
  masked.problem.num_groups = 2;
  EXPECT_THROW(plan_gemm(masked, f, grouped), Error);
  // The SM100 spec plans no cluster-summed split: asked for, an error; auto, none.
  const DeviceFacts sm100 = DeviceFacts::b200_model();
  EXPECT_THROW(plan_gemm(dense_desc(255, 576, 7168, 1, DType::kBF16, false), sm100, grouped), Error);
  for (const GemmPlan& p : rank_plans(dense_desc(255, 576, 7168, 1, DType::kBF16, false), sm100, {}))
    EXPECT_EQ(p.main.kernel.k_cluster, 1u) << p.describe();
}

// Within the tie band (5% of the cheapest, kTieFraction) a plan of one launch ranks before a split
// whose slices the reduce kernel sums; and where the best of the band would launch the reduce
// kernel, a split summed in the cluster within 10% of the cheapest (kClusterSumTieFraction) goes
// first. On decode-sized and m = 128 rows the cluster-summed splits ran 7-14% faster than the
// reduce-kernel splits the order took before (bench/results/2026-12-02-h200-decode-splits.md).
TEST(SplitKPlan, TiesGoToOneLaunchBeforeTheReduceKernel) {
  constexpr double kTieFraction = 0.05, kClusterSumTieFraction = 0.10;
  const DeviceFacts f = DeviceFacts::h200_model();
  const int64_t shapes[][3] = {{4, 1024, 4096}, {16, 1536, 4096}, {24, 4096, 7168}, {128, 576, 7168},
                               {255, 576, 7168}, {8, 768, 7168}, {64, 576, 7168}, {1, 768, 16384},
                               {128, 4096, 7168}};
  for (const auto& sh : shapes) {
    const std::vector<GemmPlan> plans = rank_plans(dense_desc(sh[0], sh[1], sh[2], 1, DType::kBF16, false), f);
    ASSERT_FALSE(plans.empty());
    const double cheapest = std::ranges::min(plans, {}, [](const GemmPlan& p) { return p.cost.total_us; }).cost.total_us;
    const auto within = [&](const GemmPlan& p, double fraction) { return p.cost.total_us <= cheapest * (1.0 + fraction); };
    const bool summed_in_reach = std::ranges::any_of(plans, [&](const GemmPlan& p) {
      return p.main.kernel.k_cluster > 1 && within(p, kClusterSumTieFraction);
    });
    const GemmPlan& pick = plans.front();
    if (summed_in_reach) {
      EXPECT_FALSE(pick.launches_reduce_kernel()) << sh[0] << "x" << sh[1] << "x" << sh[2] << ": " << pick.describe();
    } else {
      EXPECT_TRUE(within(pick, kTieFraction)) << pick.describe();
    }
    bool reduce_kernel_seen = false;
    for (size_t i = 1; i < plans.size() && within(plans[i], kTieFraction); ++i) {
      if (reduce_kernel_seen) {
        EXPECT_TRUE(plans[i].launches_reduce_kernel()) << "a one-launch plan after a reduce-kernel one: " << plans[i].describe();
      }
      reduce_kernel_seen = reduce_kernel_seen || plans[i].launches_reduce_kernel();
    }
  }
  // The measured cases: 4x1024x4096 and 128x576x7168, whose splits summed in the cluster ran
  // 11.3 us (64x64 in 4 slices and 64x96 in 8, run H) and 12.8-13.1 (64x96 in 8) against the
  // reduce kernel's 13.0-13.3 (64x64 in 8) and 14.5-14.7 (128x64 in 12).
  for (const auto& [m, n, k] : {std::array<int64_t, 3>{4, 1024, 4096}, {128, 576, 7168}}) {
    const GemmPlan p = plan_gemm(dense_desc(m, n, k, 1, DType::kBF16, false), f);
    EXPECT_FALSE(p.launches_reduce_kernel()) << p.describe();
    EXPECT_GT(p.main.kernel.k_cluster, 1u) << p.describe();
  }
}

// Rows the planner ranked wrong before operand reads were charged at the rate they reach, HBM's
// time and the on-chip bound combined as a p-norm, and A's rows charged as the box holds them
// (plan_cost.cpp), with configs the H200 ran for each (us, median, cuBLAS in the same loop;
// bench/results/2026-12-02-h200-operand-stream.md, 2026-12-02-h200-box-rows.md, run H of
// 2026-12-03-h200-last-box-sweep.md). The pick must be one of them, within 5% of the fastest.
TEST(SplitKPlan, MemoryBoundRowsPickWithinFivePercentOfTheMeasuredBest) {
  const DeviceFacts f = DeviceFacts::h200_model();
  struct Ran {
    uint32_t block_m, block_n, splits;
    bool summed_in_cluster;
    double us;
  };
  struct Row {
    int64_t m, n, k;
    std::vector<Ran> ran;
  };
  const Row rows[] = {
      {7, 1000, 16384, {{64, 96, 8, true, 19.8}, {64, 96, 12, false, 22.4}}},
      {1, 1024, 7168, {{64, 96, 8, true, 13.1}, {64, 64, 4, true, 13.6}}},
      {4, 1024, 4096, {{64, 96, 8, true, 11.3}, {64, 64, 4, true, 11.3}, {64, 64, 8, false, 13.0}}},
      {128, 4096, 7168, {{128, 64, 2, true, 29.7}, {128, 96, 3, false, 31.2}}},
      {65, 4104, 7168, {{128, 64, 2, true, 29.6}, {64, 128, 2, true, 31.9}, {64, 64, 1, false, 32.7},
                        {128, 96, 3, false, 32.0}}},
  };
  for (const Row& r : rows) {
    const GemmPlan p = plan_gemm(dense_desc(r.m, r.n, r.k, 1, DType::kBF16, false), f);
    const GemmKernelSpec& k = p.main.kernel;
    const auto it = std::ranges::find_if(r.ran, [&](const Ran& x) {
      return x.block_m == k.block_m && x.block_n == k.block_n && x.splits == p.k_splits &&
             x.summed_in_cluster == (k.k_cluster > 1) && !k.swap_ab && k.cluster.size() == 1;
    });
    ASSERT_NE(it, r.ran.end()) << r.m << "x" << r.n << "x" << r.k << ": a plan not measured: " << p.describe();
    const double best = std::ranges::min(r.ran, {}, &Ran::us).us;
    EXPECT_LE(it->us, best * 1.05) << r.m << "x" << r.n << "x" << r.k << ": " << p.describe();
  }
}

TEST(SplitKPlan, ConfigTextRoundTrips) {
  const GemmConfig c = parse_config("block=128x64x64,k_splits=12");
  EXPECT_EQ(c.k_splits, 12u);
  EXPECT_EQ(format_config(c), "block_m=128,block_n=64,block_k=64,k_splits=12");
  EXPECT_EQ(parse_config(format_config(c)), c);
  EXPECT_THROW(parse_config("k_splits=two"), Error);
  const GemmConfig f = parse_config("k_splits=3,fused_reduce=1");
  EXPECT_EQ(f.fused_reduce, 1);
  EXPECT_EQ(format_config(f), "k_splits=3,fused_reduce=1");
  EXPECT_EQ(parse_config(format_config(f)), f);
  EXPECT_THROW(parse_config("fused_reduce=2"), Error);
  const GemmConfig k = parse_config("k_splits=8,cluster_reduce=1");
  EXPECT_EQ(k.cluster_reduce, 1);
  EXPECT_EQ(format_config(k), "k_splits=8,cluster_reduce=1");
  EXPECT_EQ(parse_config(format_config(k)), k);
  EXPECT_THROW(parse_config("cluster_reduce=2"), Error);
}

TEST(SplitKPlan, PlansPrintTheSplit) {
  const GemmPlan p = plan_of(128, 576, 7168);
  EXPECT_NE(p.describe().find("split-K " + std::to_string(p.k_splits)), std::string::npos) << p.describe();
  const std::string table = format_plans(rank_plans(dense_desc(128, 576, 7168, 1, DType::kBF16, false),
                                                    DeviceFacts::h200_model()), 3);
  EXPECT_NE(table.find("splits"), std::string::npos);
  EXPECT_NE(table.find("reduce us"), std::string::npos);
}

}  // namespace
}  // namespace tilecast::plan

namespace tilecast::api {
namespace {

// A warm-up compiles the reduce kernel of every split plan that launches one, once per epilogue,
// and nothing for plans that sum their slices in the GEMM or do not split.
TEST(SplitKWarm, ReduceKernelsOfSplitPlansAreWarmed) {
  GemmConfig through_kernel, fused;
  through_kernel.k_splits = fused.k_splits = 8;
  through_kernel.fused_reduce = 0;
  fused.fused_reduce = 1;
  GemmConfig unsplit;
  unsplit.k_splits = 1;
  plan::GemmDesc with_c = plan::dense_desc(256, 1024, 16384, 1, DType::kFP32, true);
  const std::vector<WarmItem> items = {{plan::dense_desc(256, 1024, 16384, 1, DType::kBF16, false), through_kernel},
                                       {plan::dense_desc(128, 2048, 16384, 1, DType::kBF16, false), through_kernel},
                                       {with_c, through_kernel},
                                       {with_c, fused},
                                       {with_c, unsplit}};
  std::vector<WarmKernel> others;
  kernels_to_warm(items, plan::DeviceFacts::h200_model(), &others);
  ASSERT_EQ(others.size(), 2u) << "one per epilogue: bf16, fp32 with C";
  EXPECT_EQ(others[0].name, "split-K reduce bf16");
  EXPECT_EQ(others[1].name, "split-K reduce fp32 +C");
  EXPECT_EQ(others[1].source.name_expression, split_k_reduce_source(with_c).name_expression);
  EXPECT_EQ(others[1].threads, kReduceThreads);
  std::vector<WarmKernel> none;
  kernels_to_warm(std::span(items).last(2), plan::DeviceFacts::h200_model(), &none);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace tilecast::api
