// Every kernel variant the heuristic can emit compiles through NVRTC for sm_90a with no local
// memory: no spills, no stack frame, and no serialised wgmma (a call left in the kernel, say a trap
// helper that was not inlined, would serialise them). Variants differ in register use by block
// shape, output dtype, C and dynamic units; the cluster shape and gemm type change the schedule's
// arithmetic, the epilogue's row checks (m-grouped, masked) and the k-tail clear (k-grouped), so
// they rotate through the list rather than multiply it, and the grouped kernels at the register
// edge (256-wide tiles, FP32 out, C) are compiled besides.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "api/warm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::api {
namespace {

// A 4096-row, 4096-column problem of `type` for the variant's output and C (only the k-grouped
// form has a C among the grouped ones: accumulating). `batch` 2 makes a normal one batched; the
// m-grouped layouts are two kernels.
plan::GemmDesc variant_desc(GemmType type, DType out, bool c, int64_t batch,
                            ContiguousLayout layout = ContiguousLayout::kOffsets) {
  switch (type) {
    case GemmType::kMGroupedContiguous: return plan::mgrouped_contiguous_desc(layout, 4096, 4096, 4096, 8, out);
    case GemmType::kMGroupedMasked: return plan::mgrouped_masked_desc(1024, 4096, 4096, 8, 256, out);
    case GemmType::kKGroupedContiguous: return plan::kgrouped_desc(4096, 4096, 8192, 4, out, c);
    default: return plan::dense_desc(4096, 4096, 4096, batch, out, c);
  }
}

TEST(KernelVariants, AllCompileWithoutLocalMemory) {
  // A cache of its own, so that every variant really goes through NVRTC and ptxas.
  const auto dir = std::filesystem::temp_directory_path() / ("tilecast-variants-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::setenv("TILECAST_CACHE_DIR", dir.c_str(), 1);

  std::vector<WarmItem> items;
  // Types with and without C: the m-grouped forms have no C.
  const GemmType without_c[] = {GemmType::kNormal, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked,
                                GemmType::kKGroupedContiguous, GemmType::kNormal};
  const GemmType with_c[] = {GemmType::kNormal, GemmType::kKGroupedContiguous, GemmType::kNormal};
  int rotate = 0, rotate_plain = 0, rotate_c = 0;
  for (uint32_t bm : {64u, 128u})
    for (uint32_t bn : kWgmmaBF16Widths)
      for (DType out : {DType::kBF16, DType::kFP32})
        for (bool c : {false, true}) {
          WarmItem it;
          const ClusterShape& cs = kClusterShapes[rotate % 6];
          const GemmType type = c ? with_c[rotate_c++ % 3] : without_c[rotate_plain++ % 5];
          it.desc = variant_desc(type, out, c, rotate % 2 ? 2 : 1,
                                 rotate_plain % 2 ? ContiguousLayout::kRowIndex : ContiguousLayout::kOffsets);
          ++rotate;
          it.config.block_m = bm;
          it.config.block_n = bn;
          it.config.cluster_m = cs.m;
          it.config.cluster_n = cs.n;
          items.push_back(it);
        }
  // The grouped kernels at the register edge: 256-wide tiles, FP32 out, C (kernels_to_warm drops
  // any the rotation already made).
  struct Edge {
    GemmType type;
    uint32_t bm;
    DType out;
    bool c;
    ContiguousLayout layout = ContiguousLayout::kOffsets;
  };
  const Edge edges[] = {{GemmType::kKGroupedContiguous, 128, DType::kFP32, true},
                        {GemmType::kKGroupedContiguous, 128, DType::kBF16, true},
                        {GemmType::kKGroupedContiguous, 64, DType::kFP32, true},
                        {GemmType::kMGroupedContiguous, 128, DType::kFP32, false},
                        {GemmType::kMGroupedContiguous, 128, DType::kFP32, false, ContiguousLayout::kRowIndex},
                        {GemmType::kMGroupedContiguous, 64, DType::kFP32, false, ContiguousLayout::kRowIndex},
                        {GemmType::kMGroupedMasked, 128, DType::kFP32, false},
                        {GemmType::kMGroupedMasked, 64, DType::kBF16, false}};
  for (const Edge& e : edges) {
    WarmItem it;
    it.desc = variant_desc(e.type, e.out, e.c, 1, e.layout);
    it.config.block_m = e.bm;
    it.config.block_n = 256;
    it.config.cluster_m = 2;
    it.config.cluster_n = 1;
    items.push_back(it);
  }
  // Clusters of 4 with the companion: the dynamic-unit main kernel and the companion kernel
  // (the planner stops at kWidestDynamicBlockN there).
  for (const ClusterShape cs : {ClusterShape{2, 2}, ClusterShape{4, 1}, ClusterShape{1, 4}})
    for (uint32_t bn : {128u, kWidestDynamicBlockN})
      for (int variant = 0; variant < 3; ++variant) {  // BF16, BF16 + C, FP32 + C
        WarmItem it;
        const DType out = variant == 2 ? DType::kFP32 : DType::kBF16;
        // Grouped types take turns with the normal one (every second variant).
        const GemmType grouped = variant == 0 ? (bn == 128 ? GemmType::kMGroupedContiguous : GemmType::kMGroupedMasked)
                                              : GemmType::kKGroupedContiguous;
        const bool turn = (cs.m + variant) % 2 == 0;
        it.desc = variant_desc(turn ? grouped : GemmType::kNormal, out, variant > 0, 1,
                               cs.n == 1 ? ContiguousLayout::kRowIndex : ContiguousLayout::kOffsets);
        it.config.block_m = 128;
        it.config.block_n = bn;
        it.config.cluster_m = cs.m;
        it.config.cluster_n = cs.n;
        it.config.companion = 1;
        items.push_back(it);
      }
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  uint32_t of_type[5] = {};
  for (const GemmKernelSpec& k : specs) ++of_type[static_cast<uint32_t>(k.type)];
  for (GemmType t : {GemmType::kNormal, GemmType::kBatched, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked,
                     GemmType::kKGroupedContiguous})
    EXPECT_GE(of_type[static_cast<uint32_t>(t)], 6u) << "gemm type " << static_cast<uint32_t>(t) << " is barely compiled";
  const auto kernels = warm_jit_cache(specs, std::max(2u, std::thread::hardware_concurrency()));
  EXPECT_GE(kernels.size(), 56u + 18u);
  std::printf("[ measured ] %zu kernels compiled\n", kernels.size());
  RecordProperty("kernels", std::to_string(kernels.size()));
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
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tilecast::api
