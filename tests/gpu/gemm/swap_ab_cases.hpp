// The swapped-operand GPU tests' problems (test_gemm_swap_ab.cpp): swap_ab=1 on m in
// {1, 7, 8, 16, 33, 64} x n in {4096, 4100 (ragged), 576} x k in {7168, 16384, 203}, BF16 and FP32
// out, with and without C and bias, unsplit and split 2 and 4; D's buffer has rows past m and
// padding past n that must stay poisoned.
#pragma once

#include <vector>

#include "gemm_case.hpp"

namespace tilecast::test {

std::vector<GemmCase> swap_ab_cases();
// The determinism test's problems: unsplit and split, with C and a bias, batched.
std::vector<GemmCase> swap_ab_determinism_cases();
// The CUDA-graph test's problems (with C, unsplit and split; graph_replay.hpp's buffers, no guard).
std::vector<GemmCase> swap_ab_graph_cases();

}  // namespace tilecast::test
