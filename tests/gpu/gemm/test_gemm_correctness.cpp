// tilecast::gemm against cuBLASLt for every cluster shape, on aligned sizes, partial tiles,
// partial clusters (odd tile counts both ways), K not a multiple of 64, m = 1, a large and a
// batched problem; BF16 and FP32 output; with and without C; and the same in every layout
// (gemm_cases.cpp).
#include <gtest/gtest.h>

#include "gemm_cases.hpp"
#include "tilecast_test/cuda_check.hpp"

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
