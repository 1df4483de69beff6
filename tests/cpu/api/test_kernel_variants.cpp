// Every kernel variant the heuristic can emit compiles through NVRTC for sm_90a with no local
// memory: no spills, no stack frame. Variants differ in register use by block shape, output dtype,
// C and dynamic units; the cluster shape and gemm type only change the schedule's arithmetic, so
// they rotate through the list rather than multiply it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "api/warm.hpp"
#include "tilecast/plan/heuristic.hpp"

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
    for (uint32_t bn : plan::kBlockNs)
      for (DType out : {DType::kBF16, DType::kFP32})
        for (bool c : {false, true}) {
          WarmItem it;
          it.shape.m = it.shape.n = it.shape.k = 4096;
          it.shape.out = out;
          it.shape.has_c = c;
          const ClusterShape& cs = kClusterShapes[rotate % 6];
          it.shape.batch = rotate % 2 ? 2 : 1;
          it.shape.type = it.shape.batch > 1 ? GemmType::kBatched : GemmType::kNormal;
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
    for (uint32_t bn : {128u, plan::kWidestDynamicBlockN})
      for (int variant = 0; variant < 3; ++variant) {  // BF16, BF16 + C, FP32 + C
        WarmItem it;
        it.shape.m = it.shape.n = it.shape.k = 4096;
        it.shape.has_c = variant > 0;
        it.shape.out = variant == 2 ? DType::kFP32 : DType::kBF16;
        it.config.block_m = 128;
        it.config.block_n = bn;
        it.config.cluster_m = cs.m;
        it.config.cluster_n = cs.n;
        it.config.companion = 1;
        items.push_back(it);
      }
  const auto kernels = warm_jit_cache(items, std::max(2u, std::thread::hardware_concurrency()));
  EXPECT_GE(kernels.size(), 56u + 18u);
  for (const WarmedKernel& k : kernels) {
    EXPECT_FALSE(k.from_cache) << k.name;
    ASSERT_TRUE(k.report_found) << k.name << ": no ptxas report (a GPU machine's driver cache answered; "
                                             "run with CUDA_CACHE_DISABLE=1)";
    EXPECT_EQ(k.spill_bytes, 0u) << k.name;
    EXPECT_EQ(k.stack_bytes, 0u) << k.name;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tilecast::api
