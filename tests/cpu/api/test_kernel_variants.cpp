// Every kernel variant the planner can emit compiles through NVRTC for sm_90a with no local
// memory: no spills, no stack frame, and no serialised wgmma (a call left in the kernel, say a trap
// helper that was not inlined, would serialise them). Variants differ in register use by block
// shape, output dtype, the epilogue (C, bias) and dynamic units; the cluster shape and gemm type
// change the schedule's arithmetic, the epilogue's row checks (m-grouped, masked) and the k-tail
// clear (k-grouped), so they rotate through the list rather than multiply it, and the grouped
// kernels at the register edge (256-wide tiles, FP32 out, C and bias) are compiled besides. Every
// epilogue takes every width: 256-wide tiles with C and a bias, or FP32 output with either, spilled
// 32-208 bytes until the trap of a timed-out wait stopped rejoining the k-loop (ptx::trap_kernel).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "api/warm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::api {
namespace {

// A 4096-row, 4096-column problem of `type` for the variant's output and epilogue (only the
// k-grouped form has a C among the grouped ones: accumulating). `batch` 2 makes a normal one
// batched; the m-grouped layouts are two kernels.
plan::GemmDesc variant_desc(GemmType type, DType out, bool c, bool bias, DType bias_type, int64_t batch,
                            ContiguousLayout layout = ContiguousLayout::kOffsets) {
  plan::GemmDesc d;
  switch (type) {
    case GemmType::kMGroupedContiguous: d = plan::mgrouped_contiguous_desc(layout, 4096, 4096, 4096, 8, out); break;
    case GemmType::kMGroupedMasked: d = plan::mgrouped_masked_desc(1024, 4096, 4096, 8, 256, out); break;
    case GemmType::kKGroupedContiguous: d = plan::kgrouped_desc(4096, 4096, 8192, 4, out, c); break;
    default: d = plan::dense_desc(4096, 4096, 4096, batch, out, c); break;
  }
  d.has_bias = bias;
  d.bias_type = bias_type;
  return d;
}

// The overrides that pin a variant's tile, cluster and companion.
GemmConfig variant_config(uint32_t bm, uint32_t bn, const ClusterShape& cs, int companion = -1) {
  GemmConfig c;
  c.block_m = bm;
  c.block_n = bn;
  c.cluster_m = cs.m;
  c.cluster_n = cs.n;
  c.companion = companion;
  return c;
}

// Appends (desc, config) to `items` where the kernel can be built (the planner refuses the rest
// with an error): gemm_spec_error of the spec the planner would make.
void add_if_buildable(std::vector<WarmItem>& items, const plan::GemmDesc& desc, const GemmConfig& config) {
  GemmKernelSpec probe;
  probe.block_m = config.block_m;
  probe.block_n = config.block_n;
  probe.stages = 2;
  probe.consumer_warpgroups = config.block_m / 64;
  probe.out = desc.out;
  probe.has_c = desc.has_c;
  probe.has_bias = desc.has_bias;
  probe.bias_type = desc.bias_type;
  probe.type = desc.problem.type;
  probe.contiguous_layout =
      desc.problem.type == GemmType::kMGroupedContiguous ? desc.problem.contiguous_layout : ContiguousLayout::kRowIndex;
  probe.layout = desc.layout;
  probe.dynamic_units = config.companion == 1;
  probe.swap_ab = config.swap_ab == 1;
  if (config.cluster_m) probe.cluster = ClusterShape{config.cluster_m, config.cluster_n};
  probe.split_columns = config.split_columns == 1;
  probe.pingpong = config.pingpong == 1;
  probe.k_serpentine = config.k_serpentine == 1;
  if (probe.split_columns || probe.pingpong) probe.consumer_warpgroups = 2;
  if (gemm_spec_error(probe) == nullptr) items.push_back({desc, config});
}

// The epilogues the variants take turns with: none, C, bias, C and bias.
struct Epi {
  bool c, bias;
};
constexpr Epi kEpilogues[] = {{false, false}, {true, false}, {false, true}, {true, true}};

// A cache folder of the test's own, so that every variant really goes through NVRTC and ptxas.
std::filesystem::path own_cache_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::setenv("TILECAST_CACHE_DIR", dir.c_str(), 1);
  return dir;
}

// Compiles `specs` into the cache folder `dir` (made for the test) and checks each kernel has no
// local memory, unserialised wgmma and one CTA per SM by registers; keeps the folder on failure.
void expect_clean_compiles(const std::vector<GemmKernelSpec>& specs, const std::filesystem::path& dir,
                           size_t at_least) {
  const auto kernels = warm_jit_cache(specs, std::max(2u, std::thread::hardware_concurrency()));
  EXPECT_GE(kernels.size(), at_least);
  std::printf("[ measured ] %zu kernels compiled\n", kernels.size());
  ::testing::Test::RecordProperty("kernels", std::to_string(kernels.size()));
  for (const WarmedKernel& k : kernels) {
    EXPECT_FALSE(k.from_cache) << k.name;
    ASSERT_TRUE(k.report_found) << k.name << ": no ptxas report (a GPU machine's driver cache answered; "
                                             "run with CUDA_CACHE_DISABLE=1)";
    EXPECT_EQ(k.spill_bytes, 0u) << k.name;
    EXPECT_EQ(k.stack_bytes, 0u) << k.name;
    EXPECT_FALSE(k.wgmma_serialized) << k.name << ": ptxas serialised its wgmma";
    // One CTA per SM by registers, as the occupancy probe assumes (src/api/device_state.cpp).
    EXPECT_GT(uint64_t{k.registers} * k.threads, kSm90RegistersPerSm / 2) << k.name << ": " << k.registers
                                                                          << " registers";
  }
  if (::testing::Test::HasFailure())
    std::printf("[ kept     ] the failing kernels' sources and ptxas reports are in %s\n", dir.c_str());
  else
    std::filesystem::remove_all(dir);
}

TEST(KernelVariants, AllCompileWithoutLocalMemory) {
  const auto dir = own_cache_dir("tilecast-variants");
  std::vector<WarmItem> items;
  const auto add = [&](const plan::GemmDesc& desc, const GemmConfig& config) { add_if_buildable(items, desc, config); };
  // Epilogues: none, C, bias, C and bias (a BF16 bias half the time); 64-row tiles the first two.
  // Types take turns: without C or bias any, with them the normal and k-grouped forms.
  const GemmType plain_types[] = {GemmType::kNormal, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked,
                                  GemmType::kKGroupedContiguous, GemmType::kNormal};
  const GemmType epilogue_types[] = {GemmType::kNormal, GemmType::kKGroupedContiguous, GemmType::kNormal};
  int rotate = 0, rotate_plain = 0, rotate_epi = 0;
  for (uint32_t bm : {64u, 128u})
    for (uint32_t bn : kWgmmaBF16Widths)
      for (DType out : {DType::kBF16, DType::kFP32})
        for (const Epi& e : kEpilogues) {
          if (bm == 64 && e.bias) continue;
          const bool plain = !e.c && !e.bias;
          const GemmType type = plain ? plain_types[rotate_plain++ % 5] : epilogue_types[rotate_epi++ % 3];
          const plan::GemmDesc desc =
              variant_desc(type, out, e.c, e.bias, rotate % 4 < 2 ? DType::kBF16 : DType::kFP32, rotate % 2 ? 2 : 1,
                           rotate_plain % 2 ? ContiguousLayout::kRowIndex : ContiguousLayout::kOffsets);
          add(desc, variant_config(bm, bn, kClusterShapes[rotate % 6]));
          ++rotate;
        }
  // The grouped kernels at the register edge: 256-wide tiles, FP32 out, C (kernels_to_warm drops
  // any the rotation already made).
  struct Edge {
    GemmType type;
    uint32_t bm, bn;
    DType out;
    bool c;
    ContiguousLayout layout = ContiguousLayout::kOffsets;
  };
  const Edge edges[] = {{GemmType::kKGroupedContiguous, 128, 256, DType::kFP32, true},
                        {GemmType::kKGroupedContiguous, 128, 256, DType::kBF16, true},
                        {GemmType::kKGroupedContiguous, 64, 256, DType::kFP32, true},
                        {GemmType::kMGroupedContiguous, 128, 256, DType::kFP32, false},
                        {GemmType::kMGroupedContiguous, 128, 256, DType::kFP32, false, ContiguousLayout::kRowIndex},
                        {GemmType::kMGroupedContiguous, 64, 256, DType::kFP32, false, ContiguousLayout::kRowIndex},
                        {GemmType::kMGroupedMasked, 128, 256, DType::kFP32, false},
                        {GemmType::kMGroupedMasked, 64, 256, DType::kBF16, false}};
  for (const Edge& e : edges)
    add(variant_desc(e.type, e.out, e.c, false, DType::kFP32, 1, e.layout), variant_config(e.bm, e.bn, {2, 1}));
  // Clusters of 4 with the companion: the dynamic-unit main kernel and the companion kernel, at
  // 128 and the widest tile, 256, with each epilogue; grouped types take turns with the normal one.
  for (const ClusterShape cs : {ClusterShape{2, 2}, ClusterShape{4, 1}, ClusterShape{1, 4}})
    for (int variant = 0; variant < 3; ++variant) {  // BF16, BF16 + C, FP32 + C
      const bool c = variant > 0;
      const DType out = variant == 2 ? DType::kFP32 : DType::kBF16;
      for (uint32_t bn : {128u, 256u}) {
        const GemmType grouped = variant == 0 ? (bn == 128 ? GemmType::kMGroupedContiguous : GemmType::kMGroupedMasked)
                                              : GemmType::kKGroupedContiguous;
        const bool turn = (cs.m + variant) % 2 == 0;
        add(variant_desc(turn ? grouped : GemmType::kNormal, out, c, false, DType::kFP32, 1,
                         cs.n == 1 ? ContiguousLayout::kRowIndex : ContiguousLayout::kOffsets),
            variant_config(128, bn, cs, 1));
      }
    }
  // 192-row tiles (three consumer warpgroups of 152 registers; dense and batched only): every width
  // they take, the output and epilogue taking turns, and the dynamic-unit kernel at the widest.
  int rotate_tall = 0;
  for (uint32_t bn : kWgmmaBF16Widths)
    for (int turn = 0; turn < 2; ++turn, ++rotate_tall) {
      const Epi& e = kEpilogues[rotate_tall % 4];
      add(variant_desc(GemmType::kNormal, rotate_tall / 4 % 2 ? DType::kFP32 : DType::kBF16, e.c, e.bias,
                       rotate_tall % 2 ? DType::kBF16 : DType::kFP32, turn ? 2 : 1),
          variant_config(kThreeWarpgroupBlockM, bn, kClusterShapes[rotate_tall % 6]));
    }
  add(variant_desc(GemmType::kNormal, DType::kFP32, true, false, DType::kFP32, 1),
      variant_config(kThreeWarpgroupBlockM, kThreeWarpgroupMaxBlockN, {2, 2}, 1));
  // Their producer's edge (56 registers): batched, FP32 out with C and an FP32 bias, in a cluster of
  // 4, spilled on its wait-timeout path while it held the last row's stage bytes in a register.
  add(variant_desc(GemmType::kNormal, DType::kFP32, true, true, DType::kFP32, 2),
      variant_config(kThreeWarpgroupBlockM, kThreeWarpgroupMaxBlockN, {4, 1}));
  // One consumer warpgroup's producer with dynamic units in clusters of 4x1, m-grouped and masked:
  // 8 bytes spilled while setmaxnreg held it at 56 registers (geometry.cuh).
  add(variant_desc(GemmType::kMGroupedContiguous, DType::kBF16, false, false, DType::kFP32, 1),
      variant_config(64, 256, {4, 1}, 1));
  add(variant_desc(GemmType::kMGroupedMasked, DType::kBF16, false, false, DType::kFP32, 1),
      variant_config(64, 144, {4, 1}, 1));
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  uint32_t of_type[5] = {};
  for (const GemmKernelSpec& k : specs) ++of_type[static_cast<uint32_t>(k.type)];
  for (GemmType t : {GemmType::kNormal, GemmType::kBatched, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked,
                     GemmType::kKGroupedContiguous})
    EXPECT_GE(of_type[static_cast<uint32_t>(t)], 6u) << "gemm type " << static_cast<uint32_t>(t) << " is barely compiled";
  expect_clean_compiles(specs, dir, 100);
}

// The NN, TN and TT kernels (MN-major operand tiles, wgmma's transpose immediates, one TMA box per
// 64 rows of an MN-major tile): every tile shape each layout allows, with the epilogues, output
// dtypes, cluster shapes and dense/batched taking turns, then the register edges (the widest
// tile each epilogue allows, FP32 out), the dynamic-unit kernels of the companion and 192-row tiles.
TEST(KernelVariants, LayoutsCompileWithoutLocalMemory) {
  const auto dir = own_cache_dir("tilecast-layout-variants");
  std::vector<WarmItem> items;
  const auto add = [&](GemmLayout layout, uint32_t bm, uint32_t bn, DType out, const Epi& e, int64_t batch,
                       const ClusterShape& cs, int companion = -1) {
    plan::GemmDesc d = plan::dense_desc(4096, 4096, 4096, batch, out, e.c, layout);
    d.has_bias = e.bias;
    d.bias_type = batch > 1 ? DType::kBF16 : DType::kFP32;
    add_if_buildable(items, d, variant_config(bm, bn, cs, companion));
  };
  int rotate = 0;
  for (GemmLayout layout : {GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT})
    for (uint32_t bm : {64u, 128u})
      for (uint32_t bn : kWgmmaBF16Widths) {
        const Epi& e = kEpilogues[rotate % 4];
        add(layout, bm, bn, rotate % 3 == 1 ? DType::kFP32 : DType::kBF16, bm == 64 ? Epi{e.c, false} : e,
            rotate % 2 ? 2 : 1, kClusterShapes[rotate % 6]);
        ++rotate;
      }
  for (GemmLayout layout : {GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT}) {
    add(layout, 128, 256, DType::kFP32, {false, false}, 1, {2, 1});
    add(layout, 128, 256, DType::kBF16, {true, false}, 2, {1, 2});
    add(layout, 128, 256, DType::kFP32, {true, true}, 1, {2, 2});
    add(layout, 128, 256, DType::kBF16, {true, false}, 1, {4, 1}, 1);
    add(layout, 128, 256, DType::kBF16, {false, false}, 1, {1, 4}, 1);
    add(layout, kThreeWarpgroupBlockM, kThreeWarpgroupMaxBlockN, DType::kFP32, {true, true}, 1, {2, 1});
    add(layout, kThreeWarpgroupBlockM, 128, DType::kBF16, {false, false}, 2, {1, 2});
  }
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  uint32_t of_layout[4] = {};
  for (const GemmKernelSpec& k : specs) ++of_layout[static_cast<uint32_t>(k.layout)];
  EXPECT_EQ(of_layout[0], 0u) << "NT is the other test's";
  for (GemmLayout l : {GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT})
    EXPECT_GE(of_layout[static_cast<uint32_t>(l)], 10u) << layout_name(l) << " is barely compiled";
  expect_clean_compiles(specs, dir, 30);
}

// The swapped-operand kernels (swap_ab=1, m <= 64): every width of kWgmmaSwapWidths with each
// output dtype and epilogue (none, C, bias, C and bias; the bias dtype alternating), and each
// width's split-K kernel, with the cluster shapes and dense/batched taking turns. (The planner
// emits no other: 128-row tiles, NT, no companion.)
TEST(KernelVariants, SwappedCompileWithoutLocalMemory) {
  const auto dir = own_cache_dir("tilecast-swapped-variants");
  std::vector<WarmItem> items;
  int rotate = 0;
  for (uint32_t bn : kWgmmaSwapWidths) {
    for (DType out : {DType::kBF16, DType::kFP32})
      for (const Epi& e : kEpilogues) {
        plan::GemmDesc d = plan::dense_desc(bn, 4096, 4096, rotate % 2 ? 2 : 1, out, e.c);
        d.has_bias = e.bias;
        d.bias_type = rotate % 4 < 2 ? DType::kBF16 : DType::kFP32;
        GemmConfig o = variant_config(kSwapBlockM, bn, kClusterShapes[rotate % 6]);
        o.swap_ab = 1;
        o.k_splits = 1;
        add_if_buildable(items, d, o);
        ++rotate;
      }
    GemmConfig split = variant_config(kSwapBlockM, bn, kClusterShapes[rotate++ % 6]);
    split.swap_ab = 1;
    split.k_splits = 4;
    add_if_buildable(items, plan::dense_desc(bn, 4096, 4096, 1, DType::kBF16, true), split);
  }
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  uint32_t swapped = 0, split = 0;
  for (const GemmKernelSpec& k : specs) {
    swapped += k.swap_ab;
    split += k.swap_ab && k.split_k;
  }
  EXPECT_EQ(swapped, specs.size()) << "swap_ab=1 plans only swapped kernels";
  EXPECT_EQ(split, std::size(kWgmmaSwapWidths));
  expect_clean_compiles(specs, dir, std::size(kWgmmaSwapWidths) * (2 * 4 + 1));
}

// Column-split tiles (split_columns=1): each tile the spec allows (three and four atoms a
// warpgroup, 144 accumulators at 192x192, n88 and a 24-column last slab at 192x176; C or a bias) with each output dtype and epilogue, dense and batched,
// the cluster shapes (but 4x1) and the companion taking turns, and the layouts whose operand boxes
// it offsets.
TEST(KernelVariants, ColumnSplitCompileWithoutLocalMemory) {
  const auto dir = own_cache_dir("tilecast-split-columns");
  std::vector<WarmItem> items;
  int rotate = 0;
  const auto add = [&](uint32_t bm, uint32_t bn, DType out, const Epi& e, GemmLayout layout, int companion) {
    plan::GemmDesc d = plan::dense_desc(4096, 4096, 4096, rotate % 2 ? 2 : 1, out, e.c, layout);
    d.has_bias = e.bias;
    d.bias_type = rotate % 4 < 2 ? DType::kBF16 : DType::kFP32;
    const ClusterShape cs = companion == 1 ? ClusterShape{2, 2} : kClusterShapes[rotate % 6];
    GemmConfig o = variant_config(bm, bn, cs, companion);
    o.split_columns = 1;
    add_if_buildable(items, d, o);
    ++rotate;
  };
  for (const auto& [bm, bn] : {std::pair{192u, 192u}, std::pair{256u, 128u}, std::pair{128u, 256u}, std::pair{192u, 128u},
                               std::pair{192u, 176u}})
    for (DType out : {DType::kBF16, DType::kFP32})
      for (const Epi& e : kEpilogues) add(bm, bn, out, e, GemmLayout::kNT, -1);
  add(192, 192, DType::kFP32, {true, false}, GemmLayout::kTT, -1);
  add(128, 256, DType::kBF16, {true, false}, GemmLayout::kNN, -1);
  add(192, 192, DType::kBF16, {true, false}, GemmLayout::kNT, 1);
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  for (const GemmKernelSpec& k : specs) EXPECT_TRUE(k.split_columns) << k.block_m << "x" << k.block_n;
  expect_clean_compiles(specs, dir, 24);  // the 4x1 turns and C with a bias are not column-split kernels
}

// Ping-pong kernels (pingpong=1): the tiles of at most 128 accumulators a warpgroup in turns
// (128x128, 128x96, 64x256), each output dtype, dense and batched, every cluster shape, and the
// layouts.
TEST(KernelVariants, PingpongCompileWithoutLocalMemory) {
  const auto dir = own_cache_dir("tilecast-pingpong");
  std::vector<WarmItem> items;
  int rotate = 0;
  const auto add = [&](uint32_t bm, uint32_t bn, DType out, GemmLayout layout) {
    const plan::GemmDesc d = plan::dense_desc(4096, 4096, 4096, rotate % 2 ? 2 : 1, out, false, layout);
    GemmConfig o = variant_config(bm, bn, kClusterShapes[rotate % 6]);
    o.pingpong = 1;
    add_if_buildable(items, d, o);
    ++rotate;
  };
  for (const auto& [bm, bn] : {std::pair{128u, 128u}, std::pair{128u, 96u}, std::pair{64u, 256u}})
    for (DType out : {DType::kBF16, DType::kFP32})
      for (GemmLayout layout : {GemmLayout::kNT, GemmLayout::kTT}) add(bm, bn, out, layout);
  add(128, 128, DType::kBF16, GemmLayout::kNN);
  add(128, 128, DType::kBF16, GemmLayout::kTN);
  // With C, a bias (BF16 or FP32) or both: the epilogue loader follows the turns.
  int epilogue = 0;
  for (const auto& [bm, bn] : {std::pair{128u, 128u}, std::pair{128u, 96u}, std::pair{64u, 256u}})
    for (DType out : {DType::kBF16, DType::kFP32}) {
      const bool c = epilogue % 3 != 1, bias = epilogue % 3 != 0;
      plan::GemmDesc d = variant_desc(GemmType::kNormal, out, c, bias, epilogue % 2 ? DType::kBF16 : DType::kFP32,
                                      epilogue % 2 ? 2 : 1);
      GemmConfig o = variant_config(bm, bn, kClusterShapes[epilogue % 6]);
      o.pingpong = 1;
      add_if_buildable(items, d, o);
      ++epilogue;
    }
  // K-grouped (the k-tail handover in turns), FP32 accumulating and BF16.
  for (const auto& [bm, bn] : {std::pair{128u, 128u}, std::pair{64u, 256u}})
    for (DType out : {DType::kBF16, DType::kFP32}) {
      GemmConfig o = variant_config(bm, bn, kClusterShapes[epilogue % 6]);
      o.pingpong = 1;
      add_if_buildable(items, variant_desc(GemmType::kKGroupedContiguous, out, out == DType::kFP32, false,
                                           DType::kFP32, 1), o);
      ++epilogue;
    }
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  for (const GemmKernelSpec& k : specs) EXPECT_TRUE(k.pingpong) << k.block_m << "x" << k.block_n;
  expect_clean_compiles(specs, dir, 22);
}

// Serpentine K (k_serpentine=1): the producer's k-block index is the only change, in the warp
// whose 56 registers have spilled before (a 192x192 producer with C and a bias, batched 4x1
// clusters with C): those, every cluster shape, the layouts, split-K summed by the reduce kernel
// and across a cluster (not fused: gemm_spec_error), swapped operands, ping-pong, column split and
// the m-grouped forms.
TEST(KernelVariants, SerpentineCompileWithoutLocalMemory) {
  const auto dir = own_cache_dir("tilecast-serpentine");
  std::vector<WarmItem> items;
  const auto add = [&](plan::GemmDesc d, GemmConfig o) {
    o.k_serpentine = 1;
    if (!o.k_splits) o.k_splits = 1;
    add_if_buildable(items, d, o);
  };
  for (const ClusterShape& cs : kClusterShapes) add(variant_desc(GemmType::kNormal, DType::kBF16, false, false, DType::kFP32, 1),
                                                    variant_config(128, 256, cs));
  add(variant_desc(GemmType::kNormal, DType::kFP32, true, true, DType::kFP32, 1), variant_config(192, 192, {1, 1}));
  add(variant_desc(GemmType::kBatched, DType::kFP32, true, false, DType::kFP32, 2), variant_config(128, 128, {4, 1}));
  for (GemmLayout layout : {GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT})
    add(plan::dense_desc(4096, 4096, 4096, 1, DType::kBF16, false, layout), variant_config(128, 256, {2, 1}));
  GemmConfig split = variant_config(128, 128, {1, 1});
  split.k_splits = 4;
  add(variant_desc(GemmType::kNormal, DType::kBF16, false, false, DType::kFP32, 1), split);
  split.cluster_reduce = 1;
  add(plan::dense_desc(128, 4096, 7168, 1, DType::kBF16, false), split);
  GemmConfig swapped = variant_config(128, 16, {1, 1});
  swapped.swap_ab = 1;
  add(plan::dense_desc(16, 4096, 7168, 1, DType::kBF16, false), swapped);
  GemmConfig turns = variant_config(128, 128, {1, 1});
  turns.pingpong = 1;
  add(variant_desc(GemmType::kNormal, DType::kFP32, true, false, DType::kFP32, 1), turns);
  GemmConfig columns = variant_config(192, 176, {1, 2});
  columns.split_columns = 1;
  add(variant_desc(GemmType::kNormal, DType::kBF16, false, false, DType::kFP32, 1), columns);
  add(variant_desc(GemmType::kMGroupedContiguous, DType::kBF16, false, false, DType::kFP32, 1), variant_config(128, 256, {2, 1}));
  add(variant_desc(GemmType::kMGroupedContiguous, DType::kBF16, false, false, DType::kFP32, 1, ContiguousLayout::kRowIndex),
      variant_config(128, 256, {1, 1}));
  add(variant_desc(GemmType::kMGroupedMasked, DType::kBF16, false, false, DType::kFP32, 1), variant_config(128, 192, {1, 2}));
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  for (const GemmKernelSpec& k : specs) EXPECT_TRUE(k.k_serpentine) << k.block_m << "x" << k.block_n;
  expect_clean_compiles(specs, dir, 19);
}

// The timeline diagnostic (-DTILECAST_TIMELINE through TILECAST_JIT_OPTIONS,
// device/kernels/gemm_sm90/timeline.cuh) keeps compiling, in a static-unit kernel and a dynamic-unit
// one with a cluster; its printf is a call, so ptxas serialises the wgmma there (which is why it is
// a diagnostic, off by default: the clean compiles above are without it).
TEST(KernelVariants, TimelineDiagnosticCompiles) {
  const auto dir = own_cache_dir("tilecast-timeline");
  std::vector<WarmItem> items;
  add_if_buildable(items, plan::dense_desc(4096, 4096, 4096, 1, DType::kBF16, false),
                   variant_config(128, 128, ClusterShape{1, 2}));
  add_if_buildable(items, plan::dense_desc(4096, 4096, 4096, 1, DType::kBF16, false),
                   variant_config(128, 128, ClusterShape{2, 2}, 1));
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  ASSERT_GE(specs.size(), 2u);
  const char* before = std::getenv("TILECAST_JIT_OPTIONS");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("TILECAST_JIT_OPTIONS", "-DTILECAST_TIMELINE", 1);
  std::vector<WarmedKernel> kernels;
  EXPECT_NO_THROW(kernels = warm_jit_cache(specs, 2));
  if (before != nullptr) ::setenv("TILECAST_JIT_OPTIONS", saved.c_str(), 1);
  else ::unsetenv("TILECAST_JIT_OPTIONS");
  ASSERT_EQ(kernels.size(), specs.size());
  for (const WarmedKernel& k : kernels) {
    ASSERT_TRUE(k.report_found) << k.name;
    EXPECT_TRUE(k.wgmma_serialized) << k.name << ": no printf in the kernel, so no timeline either";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tilecast::api
