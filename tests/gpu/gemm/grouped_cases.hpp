// The grouped GEMMs the GPU tests run, in lists that the tests and the JIT warm-up share (so that a
// GPU run finds every kernel already compiled).
#pragma once

#include <vector>

#include "grouped_case.hpp"

namespace tilecast::test {

// Every form (offsets, row index, masked, k-grouped, k-grouped accumulating) x every cluster shape
// x {BF16, FP32 out}, 128x128 tiles; then other tiles (64-row blocks, 256-wide, the narrow slab),
// empty problems (every expert empty, every K zero), a skewed routing and the companion launch.
std::vector<GroupedCase> grouped_correctness_cases();
// MISSION.md-like grouped shapes with the planner's own choices.
std::vector<GroupedCase> grouped_heuristic_cases();
// One small case per form and cluster shape: the compute-sanitizer run (GroupedSmall.*).
std::vector<GroupedCase> grouped_small_cases();
// The masked problems the CUDA-graph test captures once and replays with new masks.
std::vector<GroupedCase> masked_graph_cases();

}  // namespace tilecast::test
