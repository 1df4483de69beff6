// What the planner's sources share (src/plan only, not installed): the band and override
// vocabulary, and the cost of one candidate plan (plan_cost.cpp), which the ranking
// (gemm_plan.cpp) weighs, picks the band of (band_height.cpp) and prints (plan_format.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {

// Unit-rows per L2 band when the caller does not say, unless band_height finds one that reads
// kBandMinSaving less from HBM. Where the operands fit in L2 the order only moves what L2's
// coalescer merges, and 8 was as good as any (4096x576x7168,
// bench/results/2026-12-01-h200-alignment.md).
inline constexpr uint32_t kDefaultSwizzle = 8;
// A band taller than this keeps no L2 locality, and swizzle * units_n must fit 32 bits.
inline constexpr uint32_t kMaxSwizzle = 64;

// Column-split tiles (GemmConfig::split_columns, only when asked for; spec.cuh's rules): their
// row blocks, from kColumnSplitMinBlockM to kColumnSplitMaxBlockM.
inline constexpr uint32_t kColumnSplitBlockMs[] = {kColumnSplitMinBlockM, 192, kColumnSplitMaxBlockM};
// Ping-pong tiles (GemmConfig::pingpong; spec.cuh's rules): their row blocks, one warpgroup's atoms.
inline constexpr uint32_t kPingpongBlockMs[] = {64, 128};

// Split-K summed across a cluster (GemmKernelSpec::k_cluster; GemmConfig::cluster_reduce). Slice
// counts: the cluster sizes DeviceFacts knows how many of resident (2, 4, 8).
inline constexpr uint32_t kClusterReduceSplits[] = {2, 4, 8};

// Where a split plan's slices are summed.
enum class SliceSum { kReduceKernel, kFused, kCluster };

// The plan of one candidate (tile bm x bn, cluster cs, `splits` slices summed by `sum`, swapped
// operands with `swap`), or nullopt with `misfit` saying why it cannot run. `unswapped_surrogate`
// is what the cost model plays: d's problem itself, or for grouped problems the host-side stand-in
// of grouped_surrogate.hpp (swapped here for a swap_ab candidate). The plan keeps kDefaultSwizzle
// (or o's band): band_height gives the chosen one its own.
std::optional<GemmPlan> evaluate(const GemmDesc& d, const GemmProblem& unswapped_surrogate, const DeviceFacts& f,
                                 const GemmConfig& o, uint32_t bm, uint32_t bn, const ClusterShape& cs,
                                 uint32_t splits, bool swap, SliceSum sum, std::string& misfit);

// A's and B's bytes, each read once (per group: its rows of A, and its B where it has rows).
double operand_bytes(const GemmProblem& p);

// The problem the kernel walks: with swapped operands N runs along the tiles' rows.
GemmProblem swapped_if(const GemmProblem& p, bool swap);

// The chosen plan's band height, in unit-rows (band_height.cpp says how it is chosen), played on
// `played`: the plan's problem (unswapped), or for a grouped one its surrogate (grouped_surrogate.hpp).
uint32_t band_height(const GemmPlan& plan, const GemmProblem& played, const DeviceFacts& f);

}  // namespace tilecast::plan
