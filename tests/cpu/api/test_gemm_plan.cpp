// The planner and the kernel geometry without a GPU: the one shared-memory layout, the choices on
// the anchor shapes, overrides honoured or refused with a clear error, the plan as data.
#include <gtest/gtest.h>

#include <tuple>

#include "tilecast/device/kernels/gemm_sm90/geometry.cuh"
#include "tilecast/plan/gemm_plan.hpp"
#include "plan_error.hpp"

namespace tilecast::plan {
namespace {

GemmKernelSpec spec(uint32_t bm, uint32_t bn, uint32_t stages, DType out = DType::kBF16) {
  GemmKernelSpec s;
  s.block_m = bm;
  s.block_n = bn;
  s.stages = stages;
  s.consumer_warpgroups = bm / 64;
  s.out = out;
  return s;
}

GemmDesc dense(uint32_t m, uint32_t n, uint32_t k) { return dense_desc(m, n, k, 1, DType::kBF16, false); }

TEST(GemmGeometry, LayoutIsAlignedDisjointAndFitsItsLaunchBytes) {
  for (uint32_t bm : {64u, 128u, kThreeWarpgroupBlockM})
    for (uint32_t bn : kWgmmaBF16Widths)
      for (DType out : {DType::kBF16, DType::kFP32})
        for (GemmType type : {GemmType::kNormal, GemmType::kKGroupedContiguous}) {
          if (bm == kThreeWarpgroupBlockM && (bn > kThreeWarpgroupMaxBlockN || type != GemmType::kNormal)) continue;
          GemmKernelSpec s = spec(bm, bn, 2, out);
          s.type = type;
          const uint32_t deepest = deepest_stages(s);
          ASSERT_GE(deepest, 2u) << bm << "x" << bn;
          for (uint32_t stages = 2; stages <= deepest; ++stages) {
            s.stages = stages;
            const GemmGeometry g = gemm_geometry(s);
            const GemmSmemLayout& l = g.smem;
            EXPECT_EQ(l.a % kSwizzleAtomBytes, 0u);
            EXPECT_EQ(l.b % kSwizzleAtomBytes, 0u);
            EXPECT_EQ(l.slabs % kSwizzleAtomBytes, 0u);
            EXPECT_GE(l.b, l.a + stages * g.tile_a_bytes);
            EXPECT_GE(l.slabs, l.b + stages * g.tile_b_bytes);
            EXPECT_GE(l.full, l.slabs + s.consumer_warpgroups * g.slab_buffers * g.slab_bytes);
            EXPECT_EQ(l.full % 8, 0u) << "mbarriers are 8-byte aligned";
            EXPECT_GE(l.unit_slot, l.unit_empty + g.unit_slots * 8);
            EXPECT_GE(l.k_tail, l.unit_slot + g.unit_slots * 4);
            if (type == GemmType::kKGroupedContiguous) {
              // The k-tail handover's two mbarriers (k_tail.cuh), after its word.
              EXPECT_EQ(l.k_tail_ready % 8, 0u);
              EXPECT_GE(l.k_tail_ready, l.k_tail + 4);
              EXPECT_EQ(l.k_tail_cleared, l.k_tail_ready + 8);
              EXPECT_GE(l.end, l.k_tail_cleared + 8);
            } else {
              EXPECT_EQ(l.k_tail_ready, 0u) << "only k-grouped kernels hand a k-tail over";
              EXPECT_GE(l.end, l.k_tail + 4);
            }
            EXPECT_GE(l.launch_bytes, l.end + kSwizzleAtomBytes - 1) << "room to align the start";
            EXPECT_LE(l.launch_bytes, kSm90MaxSmemBytes);
            EXPECT_EQ(gemm_geometry_error(s), nullptr);
          }
          s.stages = deepest + 1;
          if (s.stages <= kGemmMaxStages) {
            EXPECT_NE(gemm_geometry_error(s), nullptr) << "one stage deeper must not fit";
          }
        }
}

TEST(GemmGeometry, BoxesAndSlabsFollowTheTile) {
  const GemmGeometry g = gemm_geometry(spec(128, 144, 6));
  EXPECT_EQ(g.threads, 384u);
  EXPECT_EQ(g.consumer_warps, 8u);
  EXPECT_EQ(g.a_box.cols, 64u);
  EXPECT_EQ(g.a_box.rows, 128u);
  EXPECT_EQ(g.b_box.rows, 144u);
  EXPECT_EQ(g.d_box.cols, 64u);  // 128 bytes of BF16
  EXPECT_EQ(g.d_box.rows, 64u);
  EXPECT_EQ(g.slabs, 3u);
  EXPECT_EQ(g.narrow_slab_cols, 16u);
  EXPECT_EQ(g.d_narrow_box.cols, 16u);
  const GemmGeometry f = gemm_geometry(spec(128, 256, 4, DType::kFP32));
  EXPECT_EQ(f.d_box.cols, 32u);  // 128 bytes of FP32
  EXPECT_EQ(f.slabs, 8u);
  EXPECT_EQ(f.narrow_slab_cols, 0u);
  EXPECT_EQ(f.d_narrow_box.rows, 0u);
  EXPECT_EQ(gemm_geometry(spec(64, 64, 4)).threads, 256u);
}

TEST(GemmGeometry, EveryKernelHoldsOneCtaPerSm) {
  // The occupancy probe (src/api/occupancy_probe.cu) relies on it: a second CTA's registers
  // would not fit beside the first.
  for (uint32_t bm : {64u, 128u, kThreeWarpgroupBlockM})
    for (uint32_t bn : kWgmmaBF16Widths) {
      if (bm == kThreeWarpgroupBlockM && bn > kThreeWarpgroupMaxBlockN) continue;
      const GemmGeometry g = gemm_geometry(spec(bm, bn, 4));
      EXPECT_GT(uint64_t{g.launch_registers} * g.threads, kSm90RegistersPerSm / 2) << bm;
      // setmaxnreg only moves the registers the CTA was launched with.
      EXPECT_LE(uint64_t{g.producer_registers} * 128 + uint64_t{g.consumer_registers} * 128 * (bm / 64),
                uint64_t{g.launch_registers} * g.threads)
          << bm << "x" << bn << ": setmaxnreg's split must fit the CTA's registers";
      EXPECT_GE(g.producer_registers, 56u) << bm << "x" << bn;
      // Three consumer warpgroups leave less room: 56 registers beside 96 accumulators at 192x192
      // compiled without spills (test_kernel_variants.cpp compiles every width).
      const uint32_t room = bm == kThreeWarpgroupBlockM ? 56 : 96;
      EXPECT_GE(g.consumer_registers, g.accumulators + room) << bm << "x" << bn << ": room beside the accumulators";
      EXPECT_EQ(g.producer_registers % 8, 0u);
      EXPECT_EQ(g.consumer_registers % 8, 0u);
    }
}

TEST(GemmGeometry, EpilogueGivesUpItsSecondSlabBufferOnlyForAnExtraStage) {
  // Double-buffered wherever that fits: 128x256 at 4 stages (as measured on 8192^3).
  EXPECT_EQ(gemm_geometry(spec(128, 256, 4)).slab_buffers, 2u);
  EXPECT_EQ(gemm_geometry(spec(128, 144, 5)).slab_buffers, 2u);
  // 128x144 at 6 stages fits only with one buffer per warpgroup: cuBLAS runs 4096x576x7168 with
  // these tiles and 6 stages; at 5 we measured 0.89x of it, at 4 0.80x, at 3 0.57x.
  EXPECT_EQ(gemm_geometry(spec(128, 144, 6)).slab_buffers, 1u);
  EXPECT_EQ(deepest_stages(spec(128, 144, 2)), 6u);
  EXPECT_EQ(deepest_stages(spec(128, 256, 2)), 4u);

  const GemmPlan p = plan_gemm(dense(4096, 576, 7168), DeviceFacts::h200_model());
  EXPECT_EQ(p.main.kernel.block_m, 128u);
  EXPECT_EQ(p.main.kernel.block_n, 144u);
  EXPECT_EQ(p.main.kernel.stages, 6u);
}

TEST(GemmGeometry, WithCTheRingKeepsTwoSlabBuffersAndTheRestGoToC) {
  GemmKernelSpec s = spec(128, 192, 2, DType::kFP32);
  s.has_c = true;
  s.stages = deepest_stages(s);
  EXPECT_EQ(s.stages, 4u) << "5 stages would leave one buffer";
  EXPECT_EQ(gemm_geometry(s).slab_buffers, 4u) << "the room 4 stages leave";
  s = spec(128, 144, 2);
  s.has_c = true;
  s.stages = deepest_stages(s);
  EXPECT_EQ(s.stages, 5u);
  EXPECT_EQ(gemm_geometry(s).slab_buffers, 3u) << "one per slab of the warpgroup's rows: 64 + 64 + 16 columns";
  s = spec(128, 256, 2);
  s.has_c = true;
  s.stages = deepest_stages(s);
  EXPECT_EQ(s.stages, 4u);
  EXPECT_EQ(gemm_geometry(s).slab_buffers, 2u);
}

// With C the planner's ring keeps the stages that cover kRingCoverUs of k-steps and gives the
// rest of shared memory to C's slab buffers (ring_stages); without C it is the deepest that fits.
TEST(GemmPlanner, WithCTheRingGivesStagesToSlabBuffers) {
  const auto kernel_of = [](DType out, bool has_c, uint32_t bn, uint32_t cluster_m = 1) {
    GemmConfig o;
    o.block_m = 128;
    o.block_n = bn;
    o.cluster_m = cluster_m;
    o.cluster_n = 1;
    return plan_gemm(dense_desc(4096, 7168, 2048, 1, out, has_c), DeviceFacts::h200_model(), o).main.kernel;
  };
  // The measured cases (kRingCoverUs): FP32 C, 128x176 at 4 stages (4 of 6 slabs buffered) rather
  // than the deepest 5 (2 of 6), 128x256 at 3 (5 of 8) rather than 4 (2 of 8), 128x192 at 4 (its
  // deepest) rather than 3, 128x144 at 5 (its deepest, 3 of 5) rather than 4; BF16 C, 128x176 at 4
  // (3 of 3) and 128x256 at 3 (4 of 4).
  const struct {
    DType out;
    uint32_t bn, stages, slab_buffers, deepest;
  } measured[] = {{DType::kFP32, 176, 4, 4, 5}, {DType::kFP32, 256, 3, 5, 4}, {DType::kFP32, 192, 4, 4, 4},
                  {DType::kFP32, 144, 5, 3, 5}, {DType::kBF16, 176, 4, 3, 5}, {DType::kBF16, 256, 3, 4, 4}};
  for (const auto& m : measured) {
    const GemmKernelSpec k = kernel_of(m.out, true, m.bn);
    EXPECT_EQ(k.stages, m.stages) << m.bn;
    EXPECT_EQ(gemm_geometry(k).slab_buffers, m.slab_buffers) << m.bn;
    EXPECT_EQ(deepest_stages(k), m.deepest) << m.bn;
    // A cluster keeps the deepest ring (a multicast stage waits for every CTA's release).
    EXPECT_EQ(kernel_of(m.out, true, m.bn, 2).stages, m.deepest) << m.bn;
  }
  for (uint32_t bn : kWgmmaBF16Widths)
    for (DType out : {DType::kBF16, DType::kFP32}) {
      const GemmKernelSpec plain = kernel_of(out, false, bn);
      EXPECT_EQ(plain.stages, deepest_stages(plain)) << bn << ": without C the deepest ring";
      const GemmKernelSpec k = kernel_of(out, true, bn);
      const GemmGeometry g = gemm_geometry(k);
      ASSERT_GE(k.stages, 2u) << bn;
      ASSERT_LE(k.stages, deepest_stages(k)) << bn;
      // Either every slab of a warpgroup's tile has a buffer, or one stage fewer would buffer more
      // slabs (then the stages kept are the cover's, and there are more than 2).
      if (g.slab_buffers < c_slab_buffers_for_every_slab(g)) {
        GemmKernelSpec shallower = k;
        shallower.stages = k.stages - 1;
        EXPECT_GT(gemm_geometry(shallower).slab_buffers, g.slab_buffers) << bn;
        EXPECT_GT(k.stages, 2u) << bn;
      }
    }
}

TEST(GemmSpec, RulesNameWhatIsWrong) {
  GemmKernelSpec s = spec(128, 128, 4);
  EXPECT_EQ(gemm_spec_error(s), nullptr);
  s.block_n = 100;
  EXPECT_NE(gemm_spec_error(s), nullptr);
  s = spec(128, 128, 4);
  s.cluster = {3, 1};
  EXPECT_NE(gemm_spec_error(s), nullptr);
  // Every epilogue takes every width (ptx::trap_kernel; test_kernel_variants.cpp compiles them).
  s = spec(128, 256, 4);
  s.dynamic_units = true;
  EXPECT_EQ(gemm_spec_error(s), nullptr) << "the dynamic-unit kernel takes every width";
  s.has_c = true;
  EXPECT_EQ(gemm_spec_error(s), nullptr) << "with C too";
  s = spec(128, 256, 4, DType::kFP32);
  s.has_c = s.has_bias = true;
  EXPECT_EQ(gemm_spec_error(s), nullptr) << "FP32 output with C and a bias at 256";
  s = spec(128, 128, 1);
  EXPECT_NE(gemm_spec_error(s), nullptr);
}

// gemm_spec_error refuses `s`, and its message says `why`.
void refused(const GemmKernelSpec& s, const char* why) {
  const char* e = gemm_spec_error(s);
  ASSERT_NE(e, nullptr) << why;
  EXPECT_NE(std::string(e).find(why), std::string::npos) << e;
}

// A column-split spec (split_columns): two consumer warpgroups, each over every row of the tile and
// half of its columns.
GemmKernelSpec column_split(uint32_t bm, uint32_t bn, uint32_t stages, DType out = DType::kBF16) {
  GemmKernelSpec s = spec(bm, bn, stages, out);
  s.split_columns = true;
  s.consumer_warpgroups = 2;
  return s;
}

TEST(GemmSpec, ColumnSplitTilesTakeEveryRowAndHalfTheColumns) {
  const GemmGeometry g = gemm_geometry(column_split(192, 192, 4));
  EXPECT_EQ(g.threads, 384u);
  EXPECT_EQ(g.warpgroup_m, 192u);
  EXPECT_EQ(g.warpgroup_n, 96u);
  EXPECT_EQ(g.atoms_m, 3u);
  EXPECT_EQ(g.accumulators, 144u);
  EXPECT_EQ(g.a_box.rows, 192u);
  EXPECT_EQ(g.b_box.rows, 192u);  // one B box for both warpgroups
  EXPECT_EQ(g.slabs, 2u);         // of a warpgroup's 96 columns: 64 and a narrow 32
  EXPECT_EQ(g.narrow_slab_cols, 32u);
  EXPECT_EQ(gemm_geometry(column_split(192, 192, 4, DType::kFP32)).slabs, 3u);
  EXPECT_LE(g.smem.launch_bytes, kSm90MaxSmemBytes);
  EXPECT_GE(g.consumer_registers, g.accumulators + 64) << "room beside the accumulators";
  // Rows without the split stay per warpgroup.
  const GemmGeometry rows = gemm_geometry(spec(128, 192, 4));
  EXPECT_EQ(rows.warpgroup_m, 64u);
  EXPECT_EQ(rows.warpgroup_n, 192u);

  for (const GemmKernelSpec& ok : {column_split(192, 192, 4), column_split(256, 128, 4), column_split(128, 256, 4),
                                   column_split(192, 128, 4)})
    EXPECT_EQ(gemm_geometry_error(ok), nullptr) << ok.block_m << "x" << ok.block_n;
  refused(column_split(64, 128, 4), "128, 192 or 256 rows");
  refused(column_split(320, 128, 4), "128, 192 or 256 rows");
  refused(column_split(192, 144, 4), "half of it a wgmma width");  // 72
  EXPECT_EQ(gemm_geometry_error(column_split(192, 176, 4)), nullptr) << "88 is a column-split width";
  EXPECT_EQ(gemm_geometry(column_split(192, 176, 4)).narrow_slab_cols, 24u) << "64 + a narrow 24";
  refused(column_split(256, 256, 4), "more accumulators");          // 4 atoms x 64
  GemmKernelSpec four = column_split(192, 192, 4);
  four.cluster = {4, 1};
  refused(four, "at most 2 CTAs along M");
  GemmKernelSpec both = column_split(192, 176, 4);
  both.has_c = both.has_bias = true;
  refused(both, "C or a bias, not both");
  GemmKernelSpec three = column_split(192, 192, 4);
  three.consumer_warpgroups = 3;
  refused(three, "two consumer warpgroups");
  GemmKernelSpec split_k = column_split(192, 192, 4, DType::kFP32);
  split_k.split_k = true;
  refused(split_k, "unsplit, unswapped");
  GemmKernelSpec grouped = column_split(192, 192, 4);
  grouped.type = GemmType::kMGroupedMasked;
  refused(grouped, "dense and batched");
  GemmKernelSpec nn = column_split(192, 192, 4);
  nn.layout = GemmLayout::kNN;  // B N-major: 96 columns a warpgroup are no whole 64-element span
  refused(nn, "a multiple of 64");
  nn.block_n = 256;
  nn.block_m = 128;
  EXPECT_EQ(gemm_spec_error(nn), nullptr) << "128 columns a warpgroup are";
}

// A ping-pong spec: two consumer warpgroups, each over the whole tile in its turn.
GemmKernelSpec pingpong(uint32_t bm, uint32_t bn, uint32_t stages) {
  GemmKernelSpec s = spec(bm, bn, stages);
  s.pingpong = true;
  s.consumer_warpgroups = kPingpongWarpgroups;
  return s;
}

TEST(GemmSpec, PingpongWarpgroupsTakeWholeTilesAndReleaseTheirOwnStages) {
  const GemmGeometry g = gemm_geometry(pingpong(128, 128, 6));
  EXPECT_EQ(g.threads, 384u);
  EXPECT_EQ(g.warpgroup_m, 128u);
  EXPECT_EQ(g.warpgroup_n, 128u);
  EXPECT_EQ(g.atoms_m, 2u);
  EXPECT_EQ(g.accumulators, 128u);
  EXPECT_EQ(g.stage_readers, 4u) << "the warps of the turn's warpgroup, not all eight";
  EXPECT_EQ(gemm_geometry(spec(128, 128, 6)).stage_readers, 8u) << "cooperative: every consumer warp";
  EXPECT_EQ(g.smem.launch_bytes, gemm_geometry(spec(128, 128, 6)).smem.launch_bytes) << "the same shared memory";
  EXPECT_EQ(gemm_geometry_error(pingpong(128, 128, 6)), nullptr);
  const GemmGeometry wide = gemm_geometry(pingpong(64, 256, 4));
  EXPECT_EQ(wide.atoms_m, 1u);
  EXPECT_EQ(wide.warpgroup_n, 256u);
  EXPECT_EQ(gemm_geometry_error(pingpong(64, 256, 4)), nullptr);
  refused(pingpong(128, 256, 4), "more accumulators");  // 2 atoms x 128
  refused(pingpong(192, 64, 4), "64 or 128 rows");
  GemmKernelSpec three = pingpong(128, 128, 4);
  three.consumer_warpgroups = 3;
  refused(three, "two consumer warpgroups");
  // C and a bias: the epilogue loader fills the C ring of the warpgroup whose turn the tile is,
  // with buffers for every slab of its whole tile (two atoms of two slabs at 128x128 in BF16).
  GemmKernelSpec c = pingpong(128, 128, 4);
  c.has_c = c.has_bias = true;
  EXPECT_EQ(gemm_spec_error(c), nullptr);
  const GemmGeometry with_c = gemm_geometry(c);
  EXPECT_TRUE(with_c.c_by_tma && with_c.bias_by_tma);
  EXPECT_EQ(c_slab_buffers_for_every_slab(with_c), 4u);
  EXPECT_EQ(with_c.bias_box.cols, 128u) << "one bias tile a tile, whichever warpgroup stores it";
  GemmKernelSpec grouped = pingpong(128, 128, 4);
  grouped.type = GemmType::kMGroupedContiguous;
  refused(grouped, "dense, batched and k-grouped");
  grouped.type = GemmType::kKGroupedContiguous;
  EXPECT_EQ(gemm_spec_error(grouped), nullptr);
  GemmKernelSpec split = pingpong(128, 128, 4);
  split.split_k = true;
  split.out = DType::kFP32;
  refused(split, "unsplit, unswapped");
  GemmKernelSpec companion = pingpong(128, 128, 4);
  companion.cluster = {2, 2};
  companion.dynamic_units = true;
  refused(companion, "companion");
  GemmKernelSpec tt = pingpong(128, 128, 4);
  tt.layout = GemmLayout::kTT;
  tt.cluster = {2, 1};
  EXPECT_EQ(gemm_spec_error(tt), nullptr) << "every layout and cluster";
  // Its own kernel: a field of the fingerprint, so never the cooperative kernel's JIT entry.
  EXPECT_NE(spec_fingerprint(pingpong(128, 128, 6)), spec_fingerprint(spec(128, 128, 6)));
}

TEST(GemmPlanner, PingpongByRuleOnShortKOrWhenAskedFor) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  // Where the pick would be cooperative 128x256 in 1x1 with at most 24 k-steps a tile, auto runs
  // 128x128 in turns (measured: K = 512 and 1536 of the m4096 list 1.4-3% faster than 128x256).
  for (const uint32_t k : {512u, 1536u}) {
    GemmDesc d = dense(4096, 7168, k);
    assume_padded_rows(d);
    const GemmConfig cooperative = [] {
      GemmConfig o;
      o.pingpong = 0;
      return o;
    }();
    const GemmPlan without = plan_gemm(d, h200, cooperative);
    ASSERT_EQ(without.main.kernel.block_n, 256u) << without.describe() << ": the rule's premise";
    const GemmPlan p = plan_gemm(d, h200);
    EXPECT_TRUE(p.main.kernel.pingpong) << k << ": " << p.describe();
    EXPECT_EQ(p.main.kernel.block_m, 128u);
    EXPECT_EQ(p.main.kernel.block_n, 128u);
    EXPECT_EQ(p.main.kernel.cluster, (ClusterShape{1, 1}));
    EXPECT_EQ(p.k_splits, 1u);
    EXPECT_NE(p.describe().find("ping-pong"), std::string::npos) << p.describe();
  }
  // In every layout (measured in each: 1.5-6% faster on K = 512 and 1536), and with C or a bias
  // (the epilogue loader follows the turns).
  for (const GemmLayout layout : {GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT})
    EXPECT_TRUE(plan_gemm(dense_desc(4096, 24576, 1536, 1, DType::kBF16, false, layout), h200).main.kernel.pingpong)
        << layout_name(layout);
  const GemmDesc fp32_c = dense_desc(4096, 24576, 1536, 1, DType::kFP32, true);
  EXPECT_TRUE(plan_gemm(fp32_c, h200).main.kernel.pingpong) << plan_gemm(fp32_c, h200).describe();
  GemmDesc with_bias = dense(4096, 32768, 512);
  with_bias.has_bias = true;
  EXPECT_TRUE(plan_gemm(with_bias, h200).main.kernel.pingpong) << plan_gemm(with_bias, h200).describe();
  // With FP32 C at any K, in place of a 128x192 or 128x256 pick (measured on the fp32c suite),
  // not of a narrower one (N = 2112: 128x176, 15% slower in turns).
  for (const auto& [m, n, k] : {std::tuple{8192, 8192, 8192}, std::tuple{4096, 32768, 512},
                                std::tuple{4096, 4096, 7168}, std::tuple{4096, 7168, 16384}}) {
    const GemmPlan p = plan_gemm(dense_desc(m, n, k, 1, DType::kFP32, true), h200);
    EXPECT_TRUE(p.main.kernel.pingpong) << m << "x" << n << "x" << k << ": " << p.describe();
    EXPECT_EQ(p.main.kernel.block_n, 128u);
  }
  EXPECT_FALSE(plan_gemm(dense_desc(4096, 2112, 7168, 1, DType::kFP32, true), h200).main.kernel.pingpong);
  EXPECT_FALSE(plan_gemm(dense_desc(4096, 4096, 7168, 1, DType::kBF16, true), h200).main.kernel.pingpong)
      << "BF16 C: the short-K rule";
  // K = 2048 (32 k-steps: 0.4-2% slower in turns) and longer keep the cooperative tile, as do a
  // grouped problem, a caller's width and few waves of tiles.
  const auto cooperative_pick = [&](const GemmDesc& d, const GemmConfig& o = {}) {
    const GemmPlan p = plan_gemm(d, h200, o);
    EXPECT_FALSE(p.main.kernel.pingpong) << p.describe();
  };
  cooperative_pick(dense(4096, 7168, 2048));
  cooperative_pick(dense(4096, 4096, 7168));
  cooperative_pick(dense(1024, 7168, 512));  // 32 tiles of 128x256: a quarter of a wave
  cooperative_pick(dense(8192, 8192, 8192));
  cooperative_pick(mgrouped_contiguous_desc(ContiguousLayout::kOffsets, 4 * 4096, 7168, 1536, 4, DType::kBF16));
  GemmConfig wide;
  wide.block_n = 256;
  cooperative_pick(dense(4096, 7168, 1536), wide);
  GemmConfig off;
  off.pingpong = 0;
  for (const GemmPlan& p : rank_plans(dense(4096, 7168, 1536), h200, off)) EXPECT_FALSE(p.main.kernel.pingpong);
  // Asked for: only ping-pong plans, 64- and 128-row tiles of at most 128 accumulators.
  GemmConfig on;
  on.pingpong = 1;
  const std::vector<GemmPlan> turns = rank_plans(dense(4096, 4096, 7168), h200, on);
  ASSERT_FALSE(turns.empty());
  for (const GemmPlan& p : turns) {
    EXPECT_TRUE(p.main.kernel.pingpong) << p.describe();
    EXPECT_EQ(p.main.kernel.consumer_warpgroups, 2u);
    EXPECT_LE(p.main.kernel.block_m / 64 * p.main.kernel.block_n / 2, kMaxAccumulators) << p.describe();
    EXPECT_EQ(p.k_splits, 1u);
  }
  on.block_m = 128;
  on.block_n = 256;
  EXPECT_THROW(plan_gemm(dense(4096, 4096, 7168), h200, on), Error) << "2 atoms x 128: more than a consumer holds";
  GemmConfig with_c;
  with_c.pingpong = 1;
  GemmDesc c_and_bias = dense_desc(4096, 4096, 7168, 1, DType::kFP32, true);
  c_and_bias.has_bias = true;
  const GemmPlan turns_with_c = plan_gemm(c_and_bias, h200, with_c);
  EXPECT_TRUE(turns_with_c.main.kernel.pingpong && turns_with_c.main.kernel.has_c && turns_with_c.main.kernel.has_bias)
      << turns_with_c.describe();
  // K-grouped problems too (their k-tails are handed over by the turn's warpgroup), but only when
  // asked for: in turns they ran 14-52% behind the cooperative pick, so the rule leaves them even
  // with FP32 C on a 1x1 pick. M-grouped ones not at all.
  const GemmDesc kgrouped = kgrouped_desc(4096, 7168, 16384, 4, DType::kFP32, true);
  EXPECT_TRUE(plan_gemm(kgrouped, h200, with_c).main.kernel.pingpong);
  GemmConfig lone;
  lone.cluster_m = lone.cluster_n = 1;
  EXPECT_FALSE(plan_gemm(kgrouped, h200, lone).main.kernel.pingpong) << plan_gemm(kgrouped, h200, lone).describe();
  EXPECT_FALSE(plan_gemm(kgrouped, h200).main.kernel.pingpong);
  try {
    plan_gemm(mgrouped_contiguous_desc(ContiguousLayout::kOffsets, 4 * 4096, 7168, 1536, 4, DType::kBF16), h200,
              with_c);
    ADD_FAILURE() << "an m-grouped problem takes no ping-pong kernel";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("for dense, batched and k-grouped GEMMs only"), std::string::npos) << e.what();
  }
}

TEST(GemmPlanner, ColumnSplitTilesOfARuleOrWhenAskedFor) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  GemmDesc d = dense(4104, 4104, 4104);
  assume_padded_rows(d);  // rows of 8208 bytes: seven in eight start off a line
  // Auto weighs column-split tiles of 192 rows in clusters of 1 and 2 where rows start off a line
  // (measured: 192x176 in 1x2 and 2x1 ran 4097^3 5-7% faster than any 128-row plan, in 2x2 8% slower).
  const std::vector<GemmPlan> ranked = rank_plans(d, h200);
  size_t column_split = 0;
  for (const GemmPlan& p : ranked) {
    if (!p.main.kernel.split_columns) continue;
    ++column_split;
    EXPECT_EQ(p.main.kernel.block_m, 192u) << p.describe();
    EXPECT_LE(p.main.kernel.cluster.size(), 2u) << p.describe();
    EXPECT_EQ(p.k_splits, 1u) << p.describe();
    EXPECT_FALSE(p.main.kernel.swap_ab) << p.describe();
  }
  EXPECT_GT(column_split, 0u);
  EXPECT_TRUE(ranked.front().main.kernel.split_columns) << ranked.front().describe();
  EXPECT_EQ(ranked.front().main.kernel.block_n, 176u) << ranked.front().describe();
  GemmConfig off;
  off.split_columns = 0;
  for (const GemmPlan& p : rank_plans(d, h200, off)) EXPECT_FALSE(p.main.kernel.split_columns) << p.describe();
  off.split_columns = -1;
  off.cluster_m = off.cluster_n = 2;
  for (const GemmPlan& p : rank_plans(d, h200, off)) EXPECT_FALSE(p.main.kernel.split_columns) << p.describe();
  // On a line they ran 12-13% slower than 128x256 (4096^3, 4096x4096x7168): not weighed there.
  for (const GemmPlan& p : rank_plans(dense(4096, 4096, 4096), h200))
    EXPECT_FALSE(p.main.kernel.split_columns) << p.describe();
  for (const GemmPlan& p : rank_plans(kgrouped_desc(4096, 7168, 16384, 4, DType::kFP32, true), h200))
    EXPECT_FALSE(p.main.kernel.split_columns) << p.describe();
  GemmConfig o;
  o.split_columns = 1;
  // Asked for on a problem narrower than any column-split tile (half of 64 or 96 is no split
  // width): the narrowest that can be one is weighed, not refused.
  for (uint32_t n : {1u, 64u, 80u, 96u}) {
    const GemmPlan narrow = plan_gemm(dense(4096, n, 4096), h200, o);
    EXPECT_TRUE(narrow.main.kernel.split_columns) << n << ": " << narrow.describe();
    EXPECT_EQ(gemm_geometry_error(narrow.main.kernel), nullptr) << narrow.describe();
  }
  const std::vector<GemmPlan> split = rank_plans(d, h200, o);
  ASSERT_FALSE(split.empty());
  for (const GemmPlan& p : split) {
    EXPECT_TRUE(p.main.kernel.split_columns) << p.describe();
    EXPECT_EQ(p.main.kernel.consumer_warpgroups, 2u);
    EXPECT_EQ(p.k_splits, 1u);
    EXPECT_FALSE(p.main.kernel.swap_ab);
  }
  o.block_m = 192;
  o.block_n = 192;
  const GemmPlan p = plan_gemm(d, h200, o);
  EXPECT_EQ(p.main.kernel.block_m, 192u);
  EXPECT_NE(p.describe().find("split-columns"), std::string::npos) << p.describe();
  o.block_m = 256;
  o.block_n = 256;
  EXPECT_THROW(plan_gemm(d, h200, o), Error) << "4 atoms x 128 columns: more accumulators than a consumer holds";
  GemmConfig grouped;
  grouped.split_columns = 1;
  try {
    plan_gemm(kgrouped_desc(4096, 7168, 16384, 4, DType::kFP32, true), h200, grouped);
    ADD_FAILURE() << "a k-grouped problem takes no column-split tile";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("column-split tiles are for dense and batched GEMMs only"), std::string::npos)
        << e.what();
  }
  // Small M takes split-K and swapped tiles by auto; a column-split request takes neither.
  GemmDesc small = dense(8, 4096, 7168);
  assume_padded_rows(small);
  GemmConfig s;
  s.split_columns = 1;
  const GemmPlan q = plan_gemm(small, h200, s);
  EXPECT_TRUE(q.main.kernel.split_columns);
  EXPECT_EQ(q.k_splits, 1u);
}

TEST(GemmSpec, FingerprintSeesEveryField) {
  const GemmKernelSpec base = spec(128, 128, 4);
  std::vector<GemmKernelSpec> variants(12, base);
  variants[0].block_m = 64;
  variants[1].block_n = 256;
  variants[2].stages = 5;
  variants[3].cluster = {2, 1};
  variants[4].consumer_warpgroups = 1;
  variants[5].out = DType::kFP32;
  variants[6].has_c = true;
  variants[7].type = GemmType::kBatched;
  variants[8].dynamic_units = true;
  variants[9].type = GemmType::kMGroupedContiguous;
  variants[9].contiguous_layout = ContiguousLayout::kOffsets;
  variants[10].split_k = true;
  variants[11].split_columns = true;
  for (size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(spec_fingerprint(variants[i]), spec_fingerprint(base)) << "field " << i;
    EXPECT_FALSE(variants[i] == base) << "field " << i;
  }
  variants[3].cluster = {1, 2};
  EXPECT_NE(spec_fingerprint(variants[3]), spec_fingerprint(base));
}

TEST(GemmPlanner, AnchorShapeTakesTheMeasuredBestConfig) {
  // bench/results/2026-12-01-h200-multicast.md: 128x256 tiles, 1x1 in 1572.8 us and 2x1 in
  // 1573.2: with aligned rows a multicast saves L2 lookups but not SM ingress, which binds, so
  // the tie goes to the smaller cluster.
  const GemmPlan p = plan_gemm(dense(8192, 8192, 8192), DeviceFacts::h200_model());
  EXPECT_EQ(p.main.kernel.block_m, 128u);
  EXPECT_EQ(p.main.kernel.block_n, 256u);
  EXPECT_EQ(p.main.kernel.cluster, (ClusterShape{1, 1}));
  EXPECT_EQ(p.main.clusters, 132u);
  EXPECT_EQ(p.main.kernel.stages, 4u);
  EXPECT_FALSE(p.companion);
  EXPECT_EQ(p.schedule.block_n, 256u) << "the schedule is the kernel's";
  EXPECT_EQ(p.schedule.cluster, (ClusterShape{1, 1}));
  EXPECT_GT(p.cost.ingress_us, p.cost.mma_us) << "128x256 brings 48 KiB per 1024 MMA clocks";
  // HBM (a fifth of the ingress time) adds under 1% through the p-norm.
  EXPECT_GT(p.cost.ingress_us, 4 * p.cost.hbm_us);
  EXPECT_NEAR(p.cost.total_us, p.cost.ingress_us, 0.01 * p.cost.ingress_us);
}

// 192-row tiles are weighed only where one holds every row that 128-row tiles split in two
// (gemm_plan.cpp, weighs_block_m): measured faster there (129x24577x1536), slower wherever m > 192.
TEST(GemmPlanner, TallTilesOnlyWhereOneHoldsEveryRow) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  GemmDesc odd = dense(129, 24577, 1536);
  assume_padded_rows(odd);
  const GemmPlan p = plan_gemm(odd, h200);
  EXPECT_EQ(p.main.kernel.block_m, kThreeWarpgroupBlockM) << p.describe();
  EXPECT_EQ(p.main.kernel.consumer_warpgroups, 3u);
  EXPECT_LE(p.main.kernel.block_n, kThreeWarpgroupMaxBlockN);
  const auto weighs_tall = [&](const GemmDesc& d) {
    for (const GemmPlan& q : rank_plans(d, h200))
      if (q.main.kernel.block_m == kThreeWarpgroupBlockM) return true;
    return false;
  };
  EXPECT_TRUE(weighs_tall(dense(192, 4096, 7168)));
  EXPECT_TRUE(weighs_tall(dense_desc(160, 4096, 4096, 2, DType::kBF16, false))) << "batched too";
  for (const uint32_t m : {64u, 128u, 193u, 255u, 333u, 4096u, 8192u})
    EXPECT_FALSE(weighs_tall(dense(m, 4096, 4096))) << m;
  EXPECT_FALSE(weighs_tall(mgrouped_masked_desc(160, 4096, 4096, 4, 160, DType::kBF16))) << "grouped: never";
  // Forced, they plan wherever the kernel can run, and are refused by name where it cannot.
  GemmConfig tall;
  tall.block_m = kThreeWarpgroupBlockM;
  EXPECT_EQ(plan_gemm(dense(8192, 8192, 8192), h200, tall).main.kernel.block_m, kThreeWarpgroupBlockM);
  tall.block_n = 256;
  EXPECT_NE(error_of(dense(8192, 8192, 8192), tall).find("a 192-row tile is at most 192 wide"), std::string::npos)
      << error_of(dense(8192, 8192, 8192), tall);
  tall.block_n = 0;
  const std::string grouped = error_of(mgrouped_masked_desc(160, 4096, 4096, 4, 160, DType::kBF16), tall);
  EXPECT_NE(grouped.find("192-row tiles are for dense and batched GEMMs"), std::string::npos) << grouped;
}

TEST(GemmPlanner, RowsOffALineCostTwoLinesAndAreMulticast) {
  // Measured on the H200 (bench/results/2026-12-01-h200-alignment.md): where K is odd the rows
  // of A and B (padded to 16 bytes) start off a line, and multicast ran 28-47% faster than the
  // same tiles without; where rows are aligned, within 2%.
  for (const auto& [m, n, k] : {std::tuple{4097u, 4097u, 4097u}, std::tuple{4095u, 7167u, 4104u},
                                std::tuple{8191u, 8193u, 520u}}) {
    GemmDesc d = dense(m, n, k);
    assume_padded_rows(d);
    EXPECT_EQ(d.a_row_alignment, 16u);
    EXPECT_EQ(d.b_row_alignment, 16u);
    const GemmPlan p = plan_gemm(d, DeviceFacts::h200_model());
    EXPECT_GT(p.main.kernel.cluster.size(), 1u) << m << "x" << n << "x" << k;
    EXPECT_TRUE(p.schedule.multicast_a || p.schedule.multicast_b);
    // Seven rows in eight start off a line: 1.875 lines per 128-byte row.
    EXPECT_NEAR(p.cost.l2_line_bytes, 1.875 * static_cast<double>(p.cost.l2_to_sm_bytes), 1.0);
    GemmConfig unicast;
    unicast.cluster_m = unicast.cluster_n = 1;
    const GemmPlan one = plan_gemm(d, DeviceFacts::h200_model(), unicast);
    EXPECT_GT(one.cost.total_us, p.cost.total_us * 1.2) << "L2 lookups bind without multicast";
    EXPECT_NEAR(one.cost.total_us, one.cost.l2_us, 0.01 * one.cost.l2_us) << "HBM adds under 1%";
  }
  {
    // Rows off a line ask for 128-byte promotion, under which a dense row's lines cost 0.84 of the
    // 256-byte calibration's (kPromoted128LineCost), a k-grouped row's the full cost. Whole tiles,
    // so that the busiest CTA's lines per k-step are its ingress's 1.875 times that.
    GemmConfig unicast;
    unicast.block_m = 128;
    unicast.block_n = 256;
    unicast.cluster_m = unicast.cluster_n = 1;
    GemmDesc d = dense(4096, 4096, 4096 + 64);
    d.a_row_alignment = d.b_row_alignment = 16;
    const GemmPlan p = plan_gemm(d, DeviceFacts::h200_model(), unicast);
    EXPECT_NEAR(p.cost.l2_us / p.cost.ingress_us, 1.875 * 0.84, 0.01) << p.describe();
    const GemmPlan kg = plan_gemm(kgrouped_desc(4096, 7168, 16384, 4, DType::kFP32, true), DeviceFacts::h200_model(),
                                  unicast);
    EXPECT_NEAR(kg.cost.l2_us / kg.cost.ingress_us, 1.875, 0.01) << kg.describe();
  }
  // With 128-byte promotion off a line, the measured bests: 4097^3 192x176 column-split in a
  // cluster of 2 (201.6-203.2 us against 218.7 for 128x176 in 2x2, the pick before); 4095x7167x4104
  // 128x256 in 2x1 (321.2-324.3 against 349.8 in 2x2; clusters of 4 in a line 354).
  {
    GemmDesc d = dense(4097, 4097, 4097);
    assume_padded_rows(d);
    const GemmPlan p = plan_gemm(d, DeviceFacts::h200_model());
    EXPECT_EQ(p.main.kernel.block_m, 192u) << p.describe();
    EXPECT_EQ(p.main.kernel.block_n, 176u) << p.describe();
    EXPECT_TRUE(p.main.kernel.split_columns) << p.describe();
    EXPECT_EQ(p.main.kernel.cluster.size(), 2u) << p.describe();
    GemmDesc e = dense(4095, 7167, 4104);
    assume_padded_rows(e);
    const GemmPlan q = plan_gemm(e, DeviceFacts::h200_model());
    EXPECT_EQ(q.main.kernel.block_m, 128u) << q.describe();
    EXPECT_EQ(q.main.kernel.block_n, 256u) << q.describe();
    EXPECT_EQ(q.main.kernel.cluster, (ClusterShape{2, 1})) << q.describe();
  }
  // The same sizes with rows padded to whole lines: no lookup penalty, no cluster needed.
  const GemmPlan aligned = plan_gemm(dense(4097, 4097, 4097), DeviceFacts::h200_model());
  EXPECT_DOUBLE_EQ(aligned.cost.l2_line_bytes, static_cast<double>(aligned.cost.l2_to_sm_bytes));
  EXPECT_EQ(aligned.main.kernel.cluster, (ClusterShape{1, 1}));
}

TEST(GemmPlanner, RowAlignmentIsTheLargestPowerOfTwoUpToALine) {
  EXPECT_EQ(row_alignment(0, 8192, 0), 128u);
  EXPECT_EQ(row_alignment(0, 8208, 0), 16u);
  EXPECT_EQ(row_alignment(64, 8192, 0), 64u);
  EXPECT_EQ(row_alignment(0, 8192, 8192 * 7 + 32), 32u);
  EXPECT_EQ(row_alignment(3, 8192, 0), 1u);
  GemmDesc d = dense_desc(64, 100, 48, 1, DType::kBF16, false, GemmLayout::kTN);  // A [k, m], B [k, n]
  assume_padded_rows(d);
  EXPECT_EQ(d.a_row_alignment, 128u) << "A's rows run along M: 64 BF16";
  EXPECT_EQ(d.b_row_alignment, 16u) << "B's rows run along N: 100 BF16 = 200 bytes, padded to 208";
}

TEST(GemmPlanner, TileWidthsFollowTheMeasuredOrderings) {
  // Each pair measured on the H200 (see the cost terms in plan_cost.cpp): the chosen width ran faster.
  struct Case {
    uint32_t m, n, k, block_n;
  };
  // (4097^3 left this list: with its rows off a line its choice is multicast's, tested below.)
  // The cost terms' ordering among cooperative tiles: ping-pong's rule aside.
  GemmConfig cooperative;
  cooperative.pingpong = 0;
  for (const Case& c : {Case{4096, 2112, 7168, 176},   // 161 us, against 172 with 192 and 217 with 256
                        Case{4096, 24576, 1536, 256},  // 411 us, against 418 with 192 and 411 with 176
                        Case{4096, 576, 7168, 144}}) { // one wave of 128 tiles
    EXPECT_EQ(plan_gemm(dense(c.m, c.n, c.k), DeviceFacts::h200_model(), cooperative).main.kernel.block_n, c.block_n)
        << c.m << "x" << c.n << "x" << c.k;
  }
}

TEST(GemmPlanner, EveryChoiceFitsAndUsesTheDevice) {
  for (uint32_t m : {1u, 64u, 128u, 1000u, 4096u})
    for (uint32_t n : {64u, 576u, 2112u, 7168u})
      for (uint32_t k : {64u, 7168u}) {
        const GemmPlan p = plan_gemm(dense(m, n, k), DeviceFacts::h200_model());
        const GemmGeometry g = p.geometry();
        EXPECT_EQ(gemm_geometry_error(p.main.kernel), nullptr);
        EXPECT_LE(g.smem.launch_bytes, kSm90MaxSmemBytes);
        EXPECT_GE(p.main.clusters, 1u);
        EXPECT_LE(p.main.clusters * p.main.kernel.cluster.size(), 132u);
        EXPECT_LE(p.main.kernel.block_n, (n + 63) / 64 * 64) << "no tile wider than the problem";
        EXPECT_GT(p.cost.total_us, 0.0);
        EXPECT_GE(p.cost.total_us, std::max({p.cost.mma_us, p.cost.ingress_us, p.cost.l2_us, p.cost.hbm_us}));
      }
}

TEST(GemmPlanner, RankedPlansAreSortedAndTheFirstIsTheChoice) {
  const GemmDesc d = dense(4096, 2112, 7168);
  const std::vector<GemmPlan> ranked = rank_plans(d, DeviceFacts::h200_model());
  ASSERT_GT(ranked.size(), 10u);
  EXPECT_EQ(ranked.front().main.kernel, plan_gemm(d, DeviceFacts::h200_model()).main.kernel);
  // The plans within 5% of the cheapest lead in the tie order (fewer splits, the smaller
  // cluster, the wider tile); the rest follow by estimate.
  const double tied_below = ranked.front().cost.total_us * 1.05;
  for (size_t i = 0; i < ranked.size(); ++i)
    EXPECT_LE(ranked.front().cost.total_us, ranked[i].cost.total_us + 1e-9) << i;
  size_t tied = 0;
  while (tied < ranked.size() && ranked[tied].cost.total_us <= tied_below) ++tied;
  for (size_t i = 1; i < tied; ++i) {
    const GemmKernelSpec &a = ranked[i - 1].main.kernel, &b = ranked[i].main.kernel;
    EXPECT_TRUE(ranked[i - 1].k_splits < ranked[i].k_splits ||
                (ranked[i - 1].k_splits == ranked[i].k_splits &&
                 (a.cluster.size() < b.cluster.size() ||
                  (a.cluster.size() == b.cluster.size() && a.block_m * a.block_n >= b.block_m * b.block_n))))
        << i << ": " << ranked[i - 1].describe() << " before " << ranked[i].describe();
  }
  for (size_t i = tied + 1; i < ranked.size(); ++i)
    EXPECT_LE(ranked[i - 1].cost.total_us, ranked[i].cost.total_us) << i;
  const std::string table = format_plans(ranked, 3);
  EXPECT_NE(table.find("chosen: 128x176"), std::string::npos) << table;
  EXPECT_NE(table.find("more)"), std::string::npos) << table;
}

TEST(GemmPlanner, OverridesAreHonoured) {
  GemmConfig o;
  o.block_m = 128;
  o.block_n = 128;
  o.cluster_m = 1;
  o.cluster_n = 4;
  o.multicast_a = 0;
  o.stages = 3;
  o.companion = 1;
  o.swizzle = 3;
  const GemmPlan p = plan_gemm(dense(4096, 4096, 1024), DeviceFacts::h200_model(), o);
  EXPECT_EQ(p.main.kernel.block_n, 128u);
  EXPECT_EQ(p.main.kernel.cluster, (ClusterShape{1, 4}));
  EXPECT_FALSE(p.schedule.multicast_a);
  EXPECT_TRUE(p.schedule.multicast_b);
  EXPECT_EQ(p.schedule.swizzle, 3u);
  EXPECT_EQ(p.main.kernel.stages, 3u);
  EXPECT_TRUE(p.main.kernel.dynamic_units);
  ASSERT_TRUE(p.companion);
  EXPECT_EQ(p.companion->kernel.cluster, (ClusterShape{1, 2}));
  EXPECT_TRUE(p.companion->kernel.dynamic_units);
  EXPECT_EQ(p.companion->clusters, 6u) << "12 SMs left by 30 clusters of 4 hold 6 clusters of 2";
  EXPECT_EQ(p.schedule.unit_m, 1u);
  EXPECT_EQ(p.schedule.unit_n, 4u);
  o.max_sms = 64;
  const GemmPlan capped = plan_gemm(dense(4096, 4096, 1024), DeviceFacts::h200_model(), o);
  EXPECT_EQ(capped.main.clusters, 16u);
  EXPECT_EQ(capped.sm_budget, 64u);
  EXPECT_FALSE(capped.companion) << "16 clusters of 4 use all 64 SMs";
}

// 128x256 tiles in clusters of 2x2, with the companion launch (1) or without (0).
GemmConfig tiles_128x256_in_2x2(int companion) {
  GemmConfig o;
  o.block_m = 128;
  o.block_n = 256;
  o.cluster_m = o.cluster_n = 2;
  o.companion = companion;
  return o;
}

// A kernel lets the next grid on the stream launch early only where that grid is the call's own
// (kernel.cuh): the reduce kernel or the companion. The caller's next GEMM, launched
// programmatically too, waits for the CTAs' exit: let in early (free to wait on the idle SMs),
// chains of small calls ran 5-10% slower.
TEST(GemmPlanner, OnlyKernelsWithAGridOfTheirOwnBehindThemLetItLaunchEarly) {
  const DeviceFacts f = DeviceFacts::h200_model();
  const auto check = [&](const GemmPlan& p) {
    // What api::launch puts behind the GEMM: the reduce kernel for a split the GEMM does not sum, the companion.
    const bool own_grid_behind = (p.k_splits > 1 && !p.reduces_in_gemm()) || p.companion.has_value();
    EXPECT_EQ(launches_own_dependent(p.main.kernel), own_grid_behind) << p.describe();
    if (p.companion) {
      EXPECT_TRUE(launches_own_dependent(p.companion->kernel)) << p.describe();
    }
  };
  bool reduce = false, in_cluster = false, unsplit = false, companion = false;
  for (const auto& [m, n, k] : {std::tuple{128, 2112, 7168}, {333, 2112, 7168}, {1, 4096, 4096}, {128, 576, 7168},
                                {4096, 4096, 4096}, {8192, 8192, 8192}}) {
    const GemmPlan p = plan_gemm(dense(m, n, k), f);
    check(p);
    reduce = reduce || p.launches_reduce_kernel();
    in_cluster = in_cluster || p.main.kernel.k_cluster > 1;
    unsplit = unsplit || p.k_splits == 1;
  }
  const GemmPlan with_companion = plan_gemm(dense(4096, 4096, 7168), f, tiles_128x256_in_2x2(1));
  check(with_companion);
  companion = with_companion.companion.has_value();
  GemmConfig o;
  o.k_splits = 4;
  o.fused_reduce = 1;
  const GemmPlan fused = plan_gemm(dense(333, 2112, 7168), f, o);
  check(fused);
  EXPECT_TRUE(fused.main.kernel.fused_reduce) << fused.describe();
  EXPECT_TRUE(reduce && in_cluster && unsplit && companion) << "every kind of plan was checked";
}

// The companion's estimate plays both launches claiming from one counter: 4096x4096x7168 in
// 128x256 tiles is 128 units of 2x2 tiles, 5 rounds for 30 clusters of 4 alone (the last holding
// 8 units) and 4 with 6 clusters of 2 beside them, so the MMA term falls by a fifth. Where the
// clusters of 4 take every unit at once the companion only adds its fixed cost.
TEST(GemmPlanner, TheCompanionIsCostedAsTwoLaunchesSharingTheUnits) {
  const DeviceFacts f = DeviceFacts::h200_model();
  const GemmPlan alone = plan_gemm(dense(4096, 4096, 7168), f, tiles_128x256_in_2x2(0));
  const GemmPlan shared = plan_gemm(dense(4096, 4096, 7168), f, tiles_128x256_in_2x2(1));
  ASSERT_FALSE(alone.companion);
  ASSERT_TRUE(shared.companion);
  EXPECT_NEAR(shared.cost.mma_us / alone.cost.mma_us, 4.0 / 5.0, 1e-9);
  EXPECT_NEAR(shared.cost.waves, 128.0 / (30 + 6 * 2 / 4.0), 1e-9);
  EXPECT_EQ(alone.cost.dynamic_units_us, 0.0);
  EXPECT_GT(shared.cost.dynamic_units_us, 0.0);
  EXPECT_LT(shared.cost.total_us, alone.cost.total_us);

  // 1000^3 in 128x96 tiles: 24 units of 2x2 tiles for 30 clusters of 4.
  GemmConfig o = tiles_128x256_in_2x2(0);
  o.block_n = 96;
  const GemmPlan one_round = plan_gemm(dense(1000, 1000, 1000), f, o);
  o.companion = 1;
  const GemmPlan idle_companion = plan_gemm(dense(1000, 1000, 1000), f, o);
  ASSERT_TRUE(idle_companion.companion);
  EXPECT_EQ(idle_companion.cost.mma_us, one_round.cost.mma_us);
  EXPECT_NEAR(idle_companion.cost.total_us - one_round.cost.total_us, idle_companion.cost.dynamic_units_us, 1e-9);

  // Auto never adds it: the terms do not rank it right on rows that start off a line.
  for (const GemmDesc& d : {dense(4096, 4096, 7168), dense(4097, 4097, 4097), dense(8192, 8192, 8192)})
    for (const GemmPlan& p : rank_plans(d, f, GemmConfig{})) EXPECT_FALSE(p.companion) << p.describe();
}

TEST(GemmPlanner, EveryOverrideOutOfRangeIsRefused) {
  const GemmDesc d = dense(1024, 1024, 1024);
  struct Case {
    GemmConfig config;
    const char* message;
  };
  std::vector<Case> cases;
  const auto add = [&](auto set, const char* message) {
    GemmConfig o;
    set(o);
    cases.push_back({o, message});
  };
  add([](GemmConfig& o) { o.block_m = 256; }, "block_m 256");
  add([](GemmConfig& o) { o.block_n = 100; }, "block_n 100 is not a tile width the kernel has (64, 96, 128");
  add([](GemmConfig& o) { o.block_k = 32; }, "block_k 32");
  add([](GemmConfig& o) { o.cluster_m = 2; }, "give cluster_m and cluster_n together");
  add([](GemmConfig& o) { o.cluster_m = 3, o.cluster_n = 1; }, "cluster 3x1");
  add([](GemmConfig& o) { o.stages = 1; }, "stages 1 is not in 2..8");
  add([](GemmConfig& o) { o.stages = 9; }, "stages 9");
  add([](GemmConfig& o) { o.multicast_a = 2; }, "multicast_a 2");
  add([](GemmConfig& o) { o.multicast_b = -5; }, "multicast_b -5");
  add([](GemmConfig& o) { o.companion = 7; }, "companion 7");
  add([](GemmConfig& o) { o.swizzle = 1u << 31; }, "swizzle 2147483648 is not in 1..64");
  add([](GemmConfig& o) { o.max_sms = 3, o.cluster_m = 2, o.cluster_n = 2; }, "max_sms 3 cannot hold one cluster of 4");
  add([](GemmConfig& o) { o.max_sms = 4, o.cluster_reduce = 1, o.k_splits = 8; },
      "max_sms 4 cannot hold one cluster of 8 slices");
  // Refused by every candidate: the reason given is the narrowest tile's, the one that binds
  // (the widest's said shared memory).
  add([](GemmConfig& o) { o.max_sms = 1, o.cluster_reduce = 1; }, "slices does not fit in 1 SMs");
  add([](GemmConfig& o) { o.block_m = 128, o.block_n = 256, o.stages = 8; }, "shared memory");
  for (const Case& c : cases) {
    const std::string e = error_of(d, c.config);
    EXPECT_NE(e.find(c.message), std::string::npos) << "expected '" << c.message << "', got '" << e << "'";
  }
  EXPECT_NE(error_of(dense(1024, 1024, 0), {}).find("empty problem"), std::string::npos);
  // Every epilogue takes every width since the trap no longer rejoins the k-loop (ptx::trap_kernel):
  // FP32 output with C and a bias at 256, and the companion's dynamic-unit kernel with C at 256,
  // plan as asked (test_kernel_variants.cpp compiles them without spills).
  GemmDesc fp32_c_bias = dense_desc(1024, 1024, 1024, 1, DType::kFP32, true);
  fp32_c_bias.has_bias = true;
  GemmConfig wide;
  wide.block_n = 256;
  EXPECT_EQ(plan_gemm(fp32_c_bias, DeviceFacts::h200_model(), wide).main.kernel.block_n, 256u);
  // Unasked, a heavy epilogue at 256 is charged kHeavyEpilogueWideSlowdown: the planner takes 192
  // where 256 lost (fp32c 4096x32768x512) and 256 where it won (fp32c 8192^3, 4096x4096x7168 and
  // 4096x7168x2048 at 3 stages, the kgrouped rows). (Cooperative tiles: with FP32 C auto runs
  // most of these rows' in turns, PingpongByRuleOnShortKOrWhenAskedFor.)
  const auto width_of = [](const GemmDesc& desc) {
    GemmConfig cooperative;
    cooperative.pingpong = 0;
    return plan_gemm(desc, DeviceFacts::h200_model(), cooperative).main.kernel.block_n;
  };
  EXPECT_EQ(width_of(dense_desc(8192, 8192, 8192, 1, DType::kFP32, true)), 256u);
  EXPECT_EQ(width_of(dense_desc(4096, 32768, 512, 1, DType::kFP32, true)), 192u);
  EXPECT_EQ(width_of(dense_desc(4096, 4096, 7168, 1, DType::kFP32, true)), 256u);
  EXPECT_EQ(width_of(dense_desc(4096, 7168, 2048, 1, DType::kFP32, true)), 256u);
  EXPECT_EQ(width_of(kgrouped_desc(4096, 7168, 16864, 4, DType::kFP32, true)), 256u);
  // The charge is the heavy epilogue's: BF16 output with C alone keeps 256 on 8192^3.
  EXPECT_EQ(width_of(dense_desc(8192, 8192, 8192, 1, DType::kBF16, true)), 256u);
  GemmDesc bf16_c = dense_desc(4096, 4096, 1024, 1, DType::kBF16, true);
  GemmConfig four;
  four.cluster_m = 2;
  four.cluster_n = 2;
  four.companion = 1;
  four.block_n = 256;
  const GemmPlan p = plan_gemm(bf16_c, DeviceFacts::h200_model(), four);
  ASSERT_TRUE(p.companion);
  EXPECT_EQ(p.main.kernel.block_n, 256u);
  // A cluster wider than the SM cap, chosen by the planner rather than asked for: it is skipped.
  GemmConfig few;
  few.max_sms = 1;
  EXPECT_EQ(plan_gemm(d, DeviceFacts::h200_model(), few).main.kernel.cluster.size(), 1u);
}

TEST(GemmPlanner, ConfigTextRoundTrips) {
  GemmConfig o;
  o.block_m = 128;
  o.block_n = 144;
  o.stages = 6;
  o.cluster_m = 2;
  o.cluster_n = 1;
  o.multicast_b = 0;
  o.swizzle = 4;
  o.max_sms = 100;
  o.companion = 1;
  o.split_columns = 1;
  o.pingpong = 0;
  o.k_serpentine = 1;
  EXPECT_EQ(parse_config(format_config(o)), o);
  EXPECT_EQ(format_config({}), "");
  EXPECT_EQ(parse_config("k_serpentine=1").k_serpentine, 1);
  EXPECT_EQ(parse_config("block=128x256x64,cluster=2x1").block_n, 256u);
  EXPECT_THROW(parse_config("blocks=1"), Error);
  EXPECT_THROW(parse_config("stages=x"), Error);
  EXPECT_THROW(parse_config("multicast_a=3"), Error);
  EXPECT_THROW(parse_config("cluster=2"), Error);
}

}  // namespace
}  // namespace tilecast::plan
