// The split-K GPU tests' problems (test_gemm_split_k.cpp): m in {1, 7, 64, 65, 128, 129, 255, 256},
// K up to 16384, ragged N, forced k_splits in {2, 3, 8} and the planner's own choice, BF16 and
// FP32 output, C, bias, alpha and beta, batched, multicast cluster shapes; each forced split
// reduced by the reduce kernel and inside the GEMM (fused_reduce), and where the slices can be a
// cluster (2, 4 or 8 of them, no multicast) across it (cluster_reduce).
#pragma once

#include <vector>

#include "gemm_case.hpp"

namespace tilecast::test {

std::vector<GemmCase> split_k_cases();
// The determinism and graph tests' problems: a forced split through either reduce, and the
// planner's own.
std::vector<GemmCase> split_k_graph_cases();

}  // namespace tilecast::test
