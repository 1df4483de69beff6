// What the planner assumes of a grouped GEMM whose group sizes it cannot see.
//
// A grouped call's sizes (expert offsets or row indices, masked counts, k-group sizes) are in
// device memory, which the host never reads (the call must not synchronise, and a captured graph
// replays with new sizes). The planner therefore works from sizes and hints alone:
//   - the cost model plays the schedule on a surrogate problem with host-side group data: the
//     same sizes, the rows or columns spread evenly over the groups (the rule and its numbers are
//     at planning_problem below);
//   - the grid is sized for any group data: a persistent launch of as many clusters as fit, or
//     fewer when no group data of these sizes can give that many units (max_units).
#pragma once

#include <cstdint>
#include <vector>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {

// A problem with group data in host memory, for the simulator.
struct PlanningProblem {
  GemmProblem sizes;          // group_data null
  std::vector<int32_t> data;  // the surrogate group data (empty for dense and batched problems)

  GemmProblem problem() const {
    GemmProblem p = sizes;
    p.group_data = data.empty() ? nullptr : data.data();
    return p;
  }
};

// The surrogate the cost model plays (dense and batched problems are their own):
//   m-grouped, offsets:   the experts share the rows evenly (M / G each, the first M % G one
//                         more): each expert ends in its own partial tile, which is the allowance
//                         for per-expert partial tiles (DeepGEMM's 4 x 8192 and 8 x 4096 are
//                         exactly this);
//   m-grouped, row index: the rows in 128-row runs, run c of C going to expert c * G / C (no
//                         padding run: the plan counts every block as work);
//   masked:               the experts' rows spread evenly over expected_m (the caller's hint)
//                         x [0.7, 1.3), the spread of DeepGEMM's test masks;
//   k-grouped:            the groups share K evenly in whole kKGroupAlignment (8) columns, as
//                         every group's size must be (K / 8 / G units each, the first ones one
//                         more; columns past the last multiple of 8 go to none).
PlanningProblem planning_problem(const GemmDesc& desc);

// The most units (clusters' worth of tiles claimed at once) that any group data of these sizes
// gives schedule c; exact where the sizes fix it (dense, batched, row index, k-grouped), a bound
// otherwise:
//   masked:   G experts of max_m rows each;
//   offsets:  sum over experts of ceil(rows_g / (block_m * unit_m)), at most
//             floor((M + E * (U - 1)) / U) with U = block_m * unit_m and E = min(G, M) experts
//             holding rows; times the units along N.
uint64_t max_units(const GemmProblem& sizes, const TileConfig& c);

// Rows and K of each group of a problem whose group data is in host memory (masked counts and
// offsets clamped as the scheduler clamps them): what the HBM term of the cost model moves.
struct GroupSize {
  uint64_t rows = 0, k = 0;
};
std::vector<GroupSize> group_sizes(const GemmProblem& p);

}  // namespace tilecast::plan
