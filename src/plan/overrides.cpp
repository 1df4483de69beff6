// GemmConfig's fields, checked alone (check_overrides); what they mean for one problem and device
// is the ranking's to check (gemm_plan.cpp).
#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "planner.hpp"

namespace tilecast::plan {
namespace {
// The SM90 kernel's row blocks: 64, 128 and 192 (one, two and three consumer warpgroups), as
// check_overrides takes them (the planner takes the arch spec's).
constexpr uint32_t kBlockMs[] = {64, 128, 192};

std::string widths_list() {
  std::string s;
  for (uint32_t w : kWgmmaBF16Widths) s += (s.empty() ? "" : ", ") + std::to_string(w);
  return s;
}

std::string swap_widths_list() {
  std::string s;
  for (uint32_t w : kWgmmaSwapWidths) s += (s.empty() ? "" : ", ") + std::to_string(w);
  return s;
}

}  // namespace

void check_overrides(const GemmConfig& o) {
  const auto fail = [](const std::string& what) { throw Error("config: " + what); };
  if (o.split_columns < -1 || o.split_columns > 1)
    fail("split_columns " + std::to_string(o.split_columns) + " is not -1 (auto), 0 (off) or 1 (on)");
  if (o.split_columns == 1) {
    if (o.block_m && std::find(std::begin(kColumnSplitBlockMs), std::end(kColumnSplitBlockMs), o.block_m) ==
                         std::end(kColumnSplitBlockMs))
      fail("split_columns=1 with block_m " + std::to_string(o.block_m) + ": column-split tiles are 128, 192 or 256 rows");
    if (o.swap_ab == 1 || o.k_splits > 1 || o.fused_reduce == 1 || o.cluster_reduce == 1)
      fail("split_columns=1 is for unsplit, unswapped kernels (not with swap_ab=1, k_splits > 1, fused_reduce=1 "
           "or cluster_reduce=1)");
    if (o.cluster_m > kColumnSplitMaxClusterM)
      fail("split_columns=1 with cluster " + std::to_string(o.cluster_m) + "x" + std::to_string(o.cluster_n) +
           ": a column-split tile's cluster is at most 2 CTAs along M");
  } else if (o.block_m && std::find(std::begin(kBlockMs), std::end(kBlockMs), o.block_m) == std::end(kBlockMs)) {
    fail("block_m " + std::to_string(o.block_m) + " is not 64, 128 or 192 (0: the planner's choice)");
  }
  if (o.pingpong < -1 || o.pingpong > 1)
    fail("pingpong " + std::to_string(o.pingpong) + " is not -1 (auto), 0 (off) or 1 (on)");
  if (o.pingpong == 1) {
    if (o.block_m && std::ranges::find(kPingpongBlockMs, o.block_m) == std::end(kPingpongBlockMs))
      fail("pingpong=1 with block_m " + std::to_string(o.block_m) + ": a ping-pong tile is 64 or 128 rows");
    if (o.swap_ab == 1 || o.k_splits > 1 || o.fused_reduce == 1 || o.cluster_reduce == 1 || o.split_columns == 1)
      fail("pingpong=1 is for unsplit, unswapped kernels (not with swap_ab=1, k_splits > 1, fused_reduce=1, "
           "cluster_reduce=1 or split_columns=1)");
    if (o.companion == 1) fail("pingpong=1 runs without a companion launch (companion=1)");
  }
  if (o.swap_ab < -1 || o.swap_ab > 1)
    fail("swap_ab " + std::to_string(o.swap_ab) + " is not -1 (auto), 0 (off) or 1 (on)");
  if (o.swap_ab == 1) {
    if (o.block_m && o.block_m != kSwapBlockM)
      fail("swap_ab=1 with block_m " + std::to_string(o.block_m) + ": swapped tiles are " +
           std::to_string(kSwapBlockM) + " rows over N");
    if (o.block_n && !is_wgmma_swap_width(o.block_n))
      fail("swap_ab=1 with block_n " + std::to_string(o.block_n) + ": a swapped tile is " + swap_widths_list() +
           " wide (M's side)");
    if (o.companion == 1) fail("swap_ab=1 runs without a companion launch (companion=1)");
  } else if (o.block_n && !is_wgmma_width(o.block_n)) {
    fail("block_n " + std::to_string(o.block_n) + " is not a tile width the kernel has (" + widths_list() + ")");
  }
  if (o.block_k && o.block_k != kGemmBlockK) fail("block_k " + std::to_string(o.block_k) + " is not 64 (BF16's)");
  if ((o.cluster_m == 0) != (o.cluster_n == 0)) fail("give cluster_m and cluster_n together");
  if (o.cluster_m && !is_cluster_shape({o.cluster_m, o.cluster_n}))
    fail("cluster " + std::to_string(o.cluster_m) + "x" + std::to_string(o.cluster_n) +
         " is not one of 1x1, 2x1, 1x2, 4x1, 1x4, 2x2");
  if (o.stages && (o.stages < 2 || o.stages > kGemmMaxStages))
    fail("stages " + std::to_string(o.stages) + " is not in 2.." + std::to_string(kGemmMaxStages));
  for (const auto& [name, v] : {std::pair{"multicast_a", o.multicast_a}, std::pair{"multicast_b", o.multicast_b},
                                std::pair{"companion", o.companion}, std::pair{"k_serpentine", o.k_serpentine}})
    if (v < -1 || v > 1) fail(std::string(name) + " " + std::to_string(v) + " is not -1 (auto), 0 (off) or 1 (on)");
  if (o.swizzle > kMaxSwizzle)
    fail("swizzle " + std::to_string(o.swizzle) + " is not in 1.." + std::to_string(kMaxSwizzle) +
         " (0: the planner's band)");
  if (o.k_splits > kMaxKSplits)
    fail("k_splits " + std::to_string(o.k_splits) + " is not in 0 (the planner's choice), 1 (off) or 2.." +
         std::to_string(kMaxKSplits));
  if (o.k_splits > 1 && o.companion == 1) fail("k_splits " + std::to_string(o.k_splits) + " runs without a companion launch (companion=1)");
  if (o.fused_reduce < -1 || o.fused_reduce > 1)
    fail("fused_reduce " + std::to_string(o.fused_reduce) +
         " is not -1 (auto), 0 (the reduce kernel) or 1 (in the GEMM)");
  if (o.fused_reduce == 1 && o.k_splits == 1)
    fail("fused_reduce=1 sums split-K slices, but k_splits=1 splits nothing (give k_splits 0 or 2.." +
         std::to_string(kMaxKSplits) + ")");
  if (o.fused_reduce == 1 && o.swap_ab == 1) fail("fused_reduce=1 is for unswapped kernels, not with swap_ab=1");
  if (o.cluster_reduce < -1 || o.cluster_reduce > 1)
    fail("cluster_reduce " + std::to_string(o.cluster_reduce) + " is not -1 (auto), 0 (off) or 1 (across a cluster)");
  if (o.cluster_reduce == 1) {
    const auto splits_ok = std::ranges::find(kClusterReduceSplits, o.k_splits) != std::end(kClusterReduceSplits);
    if (o.k_splits != 0 && !splits_ok)
      fail("cluster_reduce=1 runs each tile's slices as one cluster: k_splits " + std::to_string(o.k_splits) +
           " is not 0 (the planner's choice), 2, 4 or 8");
    if (o.fused_reduce == 1) fail("cluster_reduce=1 and fused_reduce=1 are two ways to sum the slices: pick one");
    if (o.swap_ab == 1) fail("cluster_reduce=1 is for unswapped kernels, not with swap_ab=1");
    if (o.companion == 1) fail("cluster_reduce=1 runs without a companion launch (companion=1)");
    if (o.cluster_m && (o.cluster_m != 1 || o.cluster_n != 1))
      fail("cluster_reduce=1: the cluster is the tile's slices, so cluster must be 1x1 (not " +
           std::to_string(o.cluster_m) + "x" + std::to_string(o.cluster_n) + ")");
  }
  if (o.k_serpentine == 1 && o.fused_reduce == 1)
    fail("k_serpentine=1 is not for fused_reduce=1 kernels (a register edge: the fused 128x128 with C and a bias "
         "spilled)");
  if (o.k_serpentine == 1 && o.companion == 1)
    fail("k_serpentine=1 runs without a companion launch (companion=1): a claimed unit's wave is not its index's");
  if (o.max_sms && o.cluster_m && o.max_sms < o.cluster_m * o.cluster_n)
    fail("max_sms " + std::to_string(o.max_sms) + " cannot hold one cluster of " +
         std::to_string(o.cluster_m * o.cluster_n));
  // A split summed across a cluster runs each tile's slices as one cluster.
  if (o.max_sms && o.cluster_reduce == 1 && o.k_splits && o.max_sms < o.k_splits)
    fail("max_sms " + std::to_string(o.max_sms) + " cannot hold one cluster of " + std::to_string(o.k_splits) +
         " slices (cluster_reduce=1 runs a tile's k_splits slices as one cluster)");
}

}  // namespace tilecast::plan
