// tilecast::gemm against cuBLASLt for every cluster shape, on aligned sizes, partial tiles,
// partial clusters (odd tile counts both ways), K not a multiple of 64, m = 1, a large and a
// batched problem; BF16 and FP32 output; with and without C; and the same in every layout
// (gemm_cases.cpp).
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "gemm_cases.hpp"
#include "graph_replay.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/late_writer.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {
namespace {

using GemmTest = StreamTest<GemmCase>;

std::string case_name(const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); }

using GemmCorrectness = GemmTest;
TEST_P(GemmCorrectness, MatchesCublas) { EXPECT_TRUE(run_gemm_case(GetParam(), stream_)); }
INSTANTIATE_TEST_SUITE_P(AllClusters, GemmCorrectness, ::testing::ValuesIn(correctness_cases()), case_name);

using GemmHeuristic = GemmTest;
TEST_P(GemmHeuristic, DefaultConfigMatchesCublas) { EXPECT_TRUE(run_gemm_case(GetParam(), stream_)); }
INSTANTIATE_TEST_SUITE_P(Shapes, GemmHeuristic, ::testing::ValuesIn(heuristic_cases()), case_name);

// D = alpha * A * B^T + beta * C + bias, C separate, in place or never read (beta = 0).
using GemmEpilogueCases = GemmTest;
TEST_P(GemmEpilogueCases, MatchesCublasLtWithTheSameEpilogue) { EXPECT_TRUE(run_gemm_case(GetParam(), stream_)); }
INSTANTIATE_TEST_SUITE_P(Epilogues, GemmEpilogueCases, ::testing::ValuesIn(epilogue_cases()), case_name);

// Clusters of 4 with the companion launch of clusters of 2 sharing the unit counter.
using GemmCompanion = GemmTest;
TEST_P(GemmCompanion, MatchesCublasTwiceInARow) {
  EXPECT_TRUE(run_gemm_case(GetParam(), stream_));
  EXPECT_TRUE(run_gemm_case(GetParam(), stream_)) << "the second GEMM reuses the self-reset counters";
}
INSTANTIATE_TEST_SUITE_P(ClusterOf4, GemmCompanion, ::testing::ValuesIn(companion_cases()), case_name);

// The companion grid runs programmatically behind the main one, and the stream's next kernel
// waits only for the grid launched last: the companion must not complete before the main grid.
// Here it has nothing to do (30 units of 2x2 tiles for the 30 clusters of 4 that claim first) and
// the main grid runs 128 k-steps, so a companion that exited at once would let the next GEMM,
// which reads the first one's output as its A, start on poison.
TEST(GemmCompanionOrder, TheNextGemmOnTheStreamReadsTheWholeOutput) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    constexpr int64_t kM = 5 * 256, kN = 6 * 512, kK = 8192, kN2 = 512;
    DeviceMatrix a = make_matrix(DType::kBF16, kM, kK), b = make_matrix(DType::kBF16, kN, kK);
    DeviceMatrix d = make_matrix(DType::kBF16, kM, kN), b2 = make_matrix(DType::kBF16, kN2, kN);
    DeviceMatrix d2 = make_matrix(DType::kBF16, kM, kN2);
    DeviceMatrix ref = make_matrix(DType::kFP32, kM, kN), ref2 = make_matrix(DType::kFP32, kM, kN2);
    fill_uniform(a.view, fresh_seed(), stream);
    fill_uniform(b.view, fresh_seed(), stream);
    fill_uniform(b2.view, fresh_seed(), stream, -0.05f, 0.05f);
    GemmConfig first;
    first.block_m = 128;
    first.block_n = 256;
    first.cluster_m = first.cluster_n = 2;
    first.companion = 1;
    for (int round = 0; round < 3; ++round) {
      poison(d, stream);
      poison(d2, stream);
      gemm(a.view, b.view, d.view, stream, nullptr, first);
      gemm(d.view, b2.view, d2.view, stream);
      CublasLt lt;
      reference_gemm(lt, a.view, b.view, ref.view, stream);
      reference_gemm(lt, d.view, b2.view, ref2.view, stream);  // from the first GEMM's final output
      EXPECT_TRUE(matches(d.view, ref.view, std::nullopt, stream)) << "round " << round;
      EXPECT_TRUE(matches(d2.view, ref2.view, std::nullopt, stream)) << "round " << round << ": the second GEMM";
    }
  }
  cudaStreamDestroy(stream);
}

// GEMMs launch programmatically behind the stream's previous kernel (api/call.cpp): their CTAs may
// be resident before it ends, and wait for it before their first load. Here that kernel lets them
// launch at once and writes their A 200 us later, over poison: a GEMM that read A before the wait
// would compute NaN. Launched directly and replayed from a graph (where the launch is an edge), for
// plans with and without a grid of their own behind them (kernel.cuh): unsplit, split with the
// reduce kernel, split summed in the cluster. With the kernel's wait compiled out (H200): every
// output NaN, on all three shapes, in rounds 1 and 2 and every graph replay (round 0 plans and
// compiles on the host first, by when the write is done).
TEST(GemmProgrammaticLaunch, ReadsTheInputThePreviousKernelWritesLate) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    CublasLt lt;
    constexpr uint32_t kDelayUs = 200;
    for (const auto& [m, n, k] : {std::array<int64_t, 3>{1024, 1024, 4096}, {333, 2112, 7168}, {128, 576, 7168}}) {
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      DeviceMatrix a_src = make_matrix(DType::kBF16, m, k), a = make_matrix(DType::kBF16, m, k);
      DeviceMatrix b = make_matrix(DType::kBF16, n, k), d = make_matrix(DType::kBF16, m, n);
      DeviceMatrix ref = make_matrix(DType::kFP32, m, n);
      const auto refill = [&] {
        fill_uniform(a_src.view, fresh_seed(), stream);
        fill_uniform(b.view, fresh_seed(), stream);
        poison(a, stream);
        poison(d, stream);
      };
      for (int round = 0; round < 3; ++round) {
        refill();
        copy_late(a_src.view, a.view, kDelayUs, stream);
        gemm(a.view, b.view, d.view, stream);
        reference_gemm(lt, a_src.view, b.view, ref.view, stream);
        EXPECT_TRUE(matches(d.view, ref.view, std::nullopt, stream)) << shape << ", round " << round;
      }
      const cudaGraphExec_t exec = capture(stream, [&] {
        copy_late(a_src.view, a.view, kDelayUs, stream);
        gemm(a.view, b.view, d.view, stream);
      });
      for (int replay = 0; replay < 3; ++replay) {
        refill();
        TC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
        reference_gemm(lt, a_src.view, b.view, ref.view, stream);
        EXPECT_TRUE(matches(d.view, ref.view, std::nullopt, stream)) << shape << ", graph replay " << replay;
      }
      cudaGraphExecDestroy(exec);
    }
  }
  cudaStreamDestroy(stream);
}

// The configs tilecast-bench --suite mcast measures (tile, stages, every cluster, multicast off,
// companion), so that its energy and counter rows come from kernels known to be right.
using GemmMulticastWorth = GemmTest;
TEST_P(GemmMulticastWorth, MatchesCublas) { EXPECT_TRUE(run_gemm_case(GetParam(), stream_)); }
INSTANTIATE_TEST_SUITE_P(McastConfigs, GemmMulticastWorth, ::testing::ValuesIn(multicast_worth_cases()), case_name);

// NN, TN, TT (and NT) against cuBLASLt taking the same layouts through its op flags, A's and B's
// row padding NaN.
using GemmLayoutCorrectness = GemmTest;
TEST_P(GemmLayoutCorrectness, LayoutMatchesCublasLt) { EXPECT_TRUE(run_gemm_case(GetParam(), stream_)); }
INSTANTIATE_TEST_SUITE_P(Layouts, GemmLayoutCorrectness, ::testing::ValuesIn(layout_cases()), case_name);

}  // namespace
}  // namespace tilecast::test
