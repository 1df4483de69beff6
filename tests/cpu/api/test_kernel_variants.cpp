// Every kernel variant the heuristic can emit compiles through NVRTC for sm_90a with no local
// memory: no spills, no stack frame. Variants differ in register use by block shape, output dtype,
// C and dynamic units; the cluster shape and gemm type only change the schedule's arithmetic, so
// they rotate through the list rather than multiply it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "api/warm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::api {
namespace {

TEST(KernelVariants, AllCompileWithoutLocalMemory) {
  // A cache of its own, so that every variant really goes through NVRTC and ptxas.
  const auto dir = std::filesystem::temp_directory_path() / ("tilecast-variants-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::setenv("TILECAST_CACHE_DIR", dir.c_str(), 1);

  std::vector<WarmItem> items;
  int rotate = 0;
  for (uint32_t bm : {64u, 128u})
    for (uint32_t bn : kWgmmaBF16Widths)
      for (DType out : {DType::kBF16, DType::kFP32})
        for (bool c : {false, true}) {
          WarmItem it;
          const ClusterShape& cs = kClusterShapes[rotate % 6];
          it.desc = plan::dense_desc(4096, 4096, 4096, rotate % 2 ? 2 : 1, out, c);
          ++rotate;
          it.config.block_m = bm;
          it.config.block_n = bn;
          it.config.cluster_m = cs.m;
          it.config.cluster_n = cs.n;
          items.push_back(it);
        }
  // Clusters of 4 with the companion: the dynamic-unit main kernel and the companion kernel
  // (the planner stops at kWidestDynamicBlockN there).
  for (const ClusterShape cs : {ClusterShape{2, 2}, ClusterShape{4, 1}, ClusterShape{1, 4}})
    for (uint32_t bn : {128u, kWidestDynamicBlockN})
      for (int variant = 0; variant < 3; ++variant) {  // BF16, BF16 + C, FP32 + C
        WarmItem it;
        it.desc = plan::dense_desc(4096, 4096, 4096, 1, variant == 2 ? DType::kFP32 : DType::kBF16, variant > 0);
        it.config.block_m = 128;
        it.config.block_n = bn;
        it.config.cluster_m = cs.m;
        it.config.cluster_n = cs.n;
        it.config.companion = 1;
        items.push_back(it);
      }
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  const auto kernels = warm_jit_cache(specs, std::max(2u, std::thread::hardware_concurrency()));
  EXPECT_GE(kernels.size(), 56u + 18u);
  for (const WarmedKernel& k : kernels) {
    EXPECT_FALSE(k.from_cache) << k.name;
    ASSERT_TRUE(k.report_found) << k.name << ": no ptxas report (a GPU machine's driver cache answered; "
                                             "run with CUDA_CACHE_DISABLE=1)";
    EXPECT_EQ(k.spill_bytes, 0u) << k.name;
    EXPECT_EQ(k.stack_bytes, 0u) << k.name;
    // One CTA per SM by registers, as the occupancy probe assumes (src/api/device_state.cpp).
    EXPECT_GT(uint64_t{k.registers} * k.threads, kSm90RegistersPerSm / 2) << k.name << ": " << k.registers
                                                                          << " registers";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tilecast::api
