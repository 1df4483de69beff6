// The GEMMs the GPU tests run, in one list that the tests and the JIT warm-up share (so that a
// GPU run finds every kernel already compiled).
#pragma once

#include <vector>

#include "gemm_case.hpp"

namespace tilecast::test {

// Every cluster shape x {aligned, partial tiles, partial clusters, odd K, m = 1, large, batched}
// x {BF16, FP32 out} x {with, without C}, 128x128 tiles; and 96- and 144-wide tiles.
std::vector<GemmCase> correctness_cases();
// MISSION.md shapes (and a few odd ones) with the heuristic's own choices.
std::vector<GemmCase> heuristic_cases();
// Clusters of 4 with the companion launch.
std::vector<GemmCase> companion_cases();
// One small problem per cluster shape (the compute-sanitizer run), and the companion.
std::vector<GemmCase> small_cases();
// The epilogue: BF16 / FP32 output x no C / C / C in place / NaN C with beta 0 x bias (BF16,
// FP32) or none x (alpha, beta) in {(1, 0), (1, 1), (0.5, 2)}, aligned and ragged, on multicast
// cluster shapes and 96- and 144-wide tiles (narrow slabs), and the planner's own choice.
std::vector<GemmCase> epilogue_cases();
// The layouts NT, NN, TN and TT (gemm_layout.cuh): every cluster shape x {aligned, ragged with
// wholly out-of-bounds boxes, K % 8 != 0 (NaN-padded rows), batched, padded row strides} x BF16 /
// FP32 x with / without C; 64-row and 64..256-column tiles; C in place, NaN C with beta 0, alpha /
// beta / bias; multicast off; the companion; the planner's choices.
std::vector<GemmCase> layout_cases();
// The kernels `tilecast-bench --suite mcast` times (tools/bench/multicast_configs.hpp): 128x256
// tiles with 4 stages and 128x128 with 6, each in every cluster shape, with multicast off for
// 2x1, 1x2 and 2x2 and with the companion for the clusters of 4, on a problem with partial tiles,
// partial clusters along both dimensions and a partial last k-step.
std::vector<GemmCase> multicast_worth_cases();
// The CUDA-graph tests' problems (test_gemm_graphs.cpp): the planner's choice, a multicast pair
// and a cluster of 4 with its companion, with and without C; then the shape captured with other
// buffers than it was prepared with, and the one captured unprepared.
std::vector<GemmCase> graph_cases();
GemmCase graph_other_buffers_case();
GemmCase graph_unprepared_case();

}  // namespace tilecast::test
