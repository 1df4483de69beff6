// The ranking (rank_plans): every candidate the arch spec and the overrides allow, costed by
// plan_cost.cpp. The cheapest plan wins, and within 5% (kTieFraction) one launch before a split
// that needs the reduce kernel behind it (within 10% for a split summed in the cluster:
// kClusterSumTieFraction), then fewer split-K slices, then the smaller cluster on SM90 (less
// coupling, easier placement; k-grouped problems a cluster of 2 along M first, kKGroupedTieCluster;
// the larger on SM100, S6), then the smaller MMA makespan (kTieFraction says why), then the wider
// tile. On top, rules for what the terms were measured not to capture: 192-row, column-split and
// ping-pong tiles, swapped operands, two moves in the tie band (each says where it was measured).
// Every tile and cluster is the arch spec's (arch_spec.hpp).
#include "tilecast/plan/gemm_plan.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "planner.hpp"
#include "tilecast/plan/grouped_surrogate.hpp"

namespace tilecast::plan {
namespace {
// Plans within this fraction of the cheapest count as ties: the model's terms met the sweep's
// measured times within about 5% (clusters of 4 on 4095x7167x4104 5% slower than their ingress
// term, 2x1 4% faster than its L2 term; the timing loop's own noise 1-2%), so it cannot rank
// closer plans, and the tie order below (one launch, fewer splits, the smaller cluster, the
// smaller MMA makespan, the wider tile) decides. With 2% the sweep's pick missed the best by 5-9% on
// 4095x7167x4104 and 128x2112x7168. One launch comes first: on decode-sized rows (m 1-24, n
// 768-4096, k 4096-7168) the cluster-summed split in the band ran 7-14% faster than the
// reduce-kernel split the order took before (fewer slices or a smaller MMA makespan; e.g.
// 4x1024x4096 11.4-11.9 us in 64x96 tiles of 8 slices summed in the cluster, 13.0-13.3 through the
// reduce kernel in 64x64, which the terms put 4% apart; bench/results/2026-12-02-h200-decode-splits.md);
// no suite row's plan moved with it. The MMA makespan comes before the tile's width because where
// HBM binds every tile ties, and the widest was the slowest of them: 150x32768x512 in 24.8 us with
// 192x192 (1.3 waves) against 20.3 with 192x128, the smallest makespan; masked 6 x ~20 rows 2.6-8%
// faster with 64x144/176/192 than the 64x192/256 they had (bench/results/2026-12-02-h200-tall-tiles.md).
constexpr double kTieFraction = 0.05;
// Where the best of the tie band would launch the reduce kernel, the cheapest split summed in the
// cluster within this fraction of the cheapest goes first instead. The terms over-rate those
// splits against the reduce kernel's on small-M rows: they put them 6-9% above, and they ran
// 11-15% faster (A/B in alternating processes, 3 rounds: 128x576x7168 128x64 in 8 slices summed
// in the cluster 12.9-13.0 us against 14.5-14.7 in 12 through the reduce kernel; 64x576x7168
// 11.5-11.6 against 13.2-13.5; 8x768x7168 12.2-12.4 against 14.1-14.3;
// bench/results/2026-12-02-h200-decode-splits.md). What they miss is not measured apart: what
// more slices cost beyond their workspace bytes (plan_cost.cpp's kReduceLaunchUs is stated, not
// calibrated). Of the rows with K >= 10240 and N <= 1024 that it left (estimated 11-25% slower,
// 8-13% faster), 7x1000x16384 and 8x1024x16384 take the cluster-summed split since operand reads
// are charged at the rate they reach (plan_cost.cpp, kOperandStreamHbmFraction); 1x768x16384 keeps
// the reduce kernel's, 8.5% behind a swapped plan (bench/results/2026-12-02-h200-operand-stream.md).
constexpr double kClusterSumTieFraction = 0.10;
// K-grouped plans break ties for a cluster of 2 along M before the smaller cluster: on all six
// k-grouped rows measured (FP32 out, accumulating; the kgrouped suite and DeepSeek-V3's 32 groups,
// each tile at the planner's width for its cluster) 2x1 was the best cluster or within 1% of it,
// 1x1 2-26% slower and 1x2 up to 35% (kg32 7168x2048 k8328: 2x1 1256.7 us, 1x1 1315.5, 1x2
// 1693.4; bench/results/2026-12-03-h200-widths-kgrouped-clusters.md, run C). The terms put 2x1
// ahead of 1x1 there too, by less than kTieFraction on the kg32 rows (4.7%), where the tie order
// took 1x1. (The groups' boxes start off a line, so B's multicast saves L2 lookups.) With it the
// kgrouped and deepseek-v3 suites' sweep had the pick within 1.6% of the best on all 12 rows, the
// kg32 ones +0.4% and +0.0% (bench/results/2026-12-03-h200-cublas-tiles-c-prefetch.md).
constexpr ClusterShape kKGroupedTieCluster{2, 1};

// Split-K counts the planner weighs (each up to the k-steps of K / kMinSliceKSteps).
constexpr uint32_t kSplitCandidates[] = {2, 3, 4, 6, 8, 12, 16, 24, 32};
// A slice shorter than this fills and drains the operand ring with nothing to overlap.
constexpr uint32_t kMinSliceKSteps = 4;

// Split-K is weighed only for problems with fewer of the largest tiles (128 x 256) than SMs: with
// a wave of those or more every SM has a tile and its K, and a split only adds the workspace's
// traffic (it also keeps planning 8192^3 as fast as before).
constexpr uint32_t kSplitTileM = 128, kSplitTileN = 256;

// Swapped operands (swap_ab) under the planner's own choice (GemmConfig swap_ab -1): by rule,
// not by cost, because the swapped cost terms below do not rank them right yet. Measured on the
// H200 (swapab suite, auto against swap_ab=1, same run each; bench/results/2026-12-01-h200-
// small-m-multicast.md): swapped ran 2-13% faster on every row with m <= 16 and n >= 2112 (ten
// rows, k 2048-16384), 1-10% slower with m >= 33 and on n = 576 (m = 1: 10%); with auto
// weighing them on their terms the planner swapped only 1x576x7168, the row that lost most.
// So auto swaps exactly where m <= kAutoSwapMaxM and n >= kAutoSwapMinN, and the terms then
// pick the swapped tile and split.
// That was measured before splits summed in the cluster existed: where the unswapped plan is one,
// auto runs it instead. On 1x, 8x and 16x2112x7168 (the swapab suite) 64x96 in 4 slices summed in
// the cluster ran 4.6-10.8% faster than the swapped pick in three sweeps
// (bench/results/2026-12-04-h200-pingpong.md, run D; 2026-12-04-h200-pingpong-epilogues.md, runs
// D and G). Where the unswapped plan is unsplit (n = 7168 of the same list) the swapped pick stays.
// On n = 4096 the unswapped plan was the unsplit 64x64, which ran 33-34 us against the swapped
// pick's 27-28, until the stream term charged its ring's turn (plan_cost.cpp, kHbmRingTurnUs): now
// it is 64x64 in 2 slices summed in the cluster, 3-5% faster than the swapped pick in one loop
// (1x4096x4096, 1x, 8x and 16x4096x7168; bench/results/2026-12-04-h200-ring-turn.md, runs A and D).
constexpr uint32_t kAutoSwapMaxM = 16;
constexpr uint32_t kAutoSwapMinN = 2048;

// Why `d` cannot run with swapped operands, or null (the rules of swap_ab_error in spec.cuh, as
// the caller's problem states them).
const char* swap_misfit(const GemmDesc& d) {
  if (d.problem.m > kSwapMaxM) return "m is more than 64 (the swapped tile's width is M's side)";
  if (d.layout != GemmLayout::kNT) return "the layout is not NT (swapped operands stay K-major)";
  if (d.problem.type != GemmType::kNormal && d.problem.type != GemmType::kBatched)
    return "it is for dense and batched GEMMs only";
  return nullptr;
}

// S6: on an arch whose cluster must divide the shape, the row blocks of every group are whole
// multiples of cluster.m and the column blocks of cluster.n.
bool cluster_divides(const GemmProblem& p, uint32_t bm, uint32_t bn, const ClusterShape& cs) {
  return ceil_div(p.m, bm) % cs.m == 0 && ceil_div(p.n, bn) % cs.n == 0;
}

// 192-row tiles (three consumer warpgroups) are weighed by rule, not by cost: only where one of
// them holds every row of a dense or batched problem that 128-row tiles split in two (128 < m <=
// kThreeWarpgroupBlockM). Measured on the H200 (block_m=192 against block_m=128, the rest the
// planner's, two rounds each; bench/results/2026-12-02-h200-tall-tiles.md): 129x24577x1536 ran
// in 34.6 us against 43.7 (one wave of 192x192 for two of 128x192), 129x2052x7168 tied (28.6
// against 28.1); wherever m > 192 they lost 1-22% (8192^3 by 5.7%, 4096x2112x7168 by 14%,
// 4096x576x7168 by 22%), as much where their terms said they would win by up to 16%, but
// 4095x7167x4104 (2% faster). What the terms miss there is not measured apart.
bool weighs_block_m(const GemmDesc& d, uint32_t bm) {
  if (bm != kThreeWarpgroupBlockM) return true;
  const GemmProblem& p = d.problem;
  constexpr uint32_t kTwoWarpgroupRows = 2 * kWgmmaAtomRows;
  return (p.type == GemmType::kNormal || p.type == GemmType::kBatched) && p.m > kTwoWarpgroupRows &&
         p.m <= kThreeWarpgroupBlockM;
}

// Column-split tiles of 192 rows (two consumer warpgroups over half the columns each: cuBLAS's
// tile on these shapes) are weighed by rule beside the others: unsplit and unswapped, in clusters
// of at most kColumnSplitAutoMaxCluster, where an operand's rows start off a line. Measured on
// the H200 (bench/results/2026-12-03-h200-l2-lines.md, run A): 4097^3 ran 192x176 in 1x2 in 203.2
// us and in 2x1 208.8, against 218.7 for the best 128-row plan (128x176 2x2); in 2x2 they lost
// 13-17% to the best column-split plan in a cluster of 2 on 4097^3, 4095x7167x4104 and
// 8191x8193x520 (237.0 against 203.2 us on 4097^3), where the terms put 2x2 first. Of 128 and 256 rows they lost 2-6% to the plain tile of
// the same size (4095x7167x4104, 8191x8193x520). On rows on a line the terms also put 192-row
// column-split tiles first on the large shapes (the ingress term binds 128x256 at 87% of the
// tensor rate, which it beats), but they ran 12-13% slower than 128x256 (4096^3, 4096x4096x7168;
// bench/results/2026-12-03-h200-cublas-tiles-c-prefetch.md, section 3). The rule then held on
// off-line shapes it was not fitted on (4104^3, 3000^3, 8200^3, 2049x6000x3000: pick within 2.6%
// of the best timed; run B) and with C, FP32 output and batches (192x176 7-9% ahead of the best
// 128-row plan; run C).
constexpr uint32_t kColumnSplitAutoBlockM = 192;
constexpr uint32_t kColumnSplitAutoMaxCluster = 2;

// Ping-pong kernels (two consumer warpgroups taking whole tiles in turn, each epilogue under the
// other's main loop) are weighed by rule, not by cost: the terms do not model the epilogue, which
// is what they hide. Where the pick would be a cooperative 128-row tile in 1x1, at least
// `from_block_n` wide, of at most `max_k_steps` k-steps over at least `min_waves` waves of tiles
// (unsplit, unswapped), auto runs 128x128 in turns in 1x1 instead.
struct PingpongReach {
  uint32_t max_k_steps;
  double min_waves;
  uint32_t from_block_n;
};
// BF16 or FP32 D, with or without BF16 C and a bias. Measured on the H200
// (bench/results/2026-12-04-h200-pingpong.md): against the cooperative 128x256 in alternating
// processes (run C), K = 512 (8 k-steps) 0.995-0.997x cuBLAS against 0.967x, K = 1536 (24) 0.983x
// against 0.969-0.970x, K = 2048 (32) 0.976-0.979x against 0.982x; in one sweep loop (run D) in
// each of the four layouts K = 512 1.5-3.5% faster, K = 1536 5-6% faster, K = 2048 1-2% slower;
// against the cooperative 128x128 (run B) 0.93-0.96 of the time on those three, 0.98-0.99 on
// K = 7168 and 16384, where 128x256 stays ahead. In clusters of 2x1 it ran 6-7% behind 1x1 on
// K = 512. The waves: the measured rows ran 6.8 to 31; the turns hide an epilogue under the next
// tile's main loop, which a CTA of one or two tiles (128x32768x512: 128 tiles) barely has. Not
// measured below. With a bias (one sweep loop, bench/results/2026-12-04-h200-pingpong-epilogues.md,
// run B): K = 512 6% and K = 1536 9% faster than the cooperative 128x256; with BF16 C and with
// FP32 D (run F) the rule's two rows of the m = 4096 list were the best timed of their sweeps.
constexpr PingpongReach kPingpongReach{24, 6.0, 256};
// With C in FP32 the epilogue moves 8 bytes an element through HBM (C in, D out) where BF16 D
// alone moves 2, and hiding it pays at any K (same loop, run B: every row of the fp32c suite
// whose pick was a cooperative 128x192 or 128x256 ran faster in turns: K = 512 5%, 1536 16%,
// 2048 8%, 7168 3% (3.9 waves of 128x256), 8192 5%, 16384 1.5%; the row whose pick is 176 wide,
// N = 2112, ran 15% slower in turns and keeps it).
constexpr PingpongReach kPingpongReachFp32C{std::numeric_limits<uint32_t>::max(), 3.0, 192};
constexpr uint32_t kPingpongAutoBlockM = 128, kPingpongAutoBlockN = 128;

bool rows_off_a_line(const GemmDesc& d) {
  return starts_off_a_line(box_row_alignment(d, true, false)) || starts_off_a_line(box_row_alignment(d, false, false));
}

// Rows of a typical group: where they fit 64, a 128-row block only computes padding.
uint32_t typical_rows(const GemmDesc& d) {
  const GemmProblem& p = d.problem;
  switch (p.type) {
    case GemmType::kMGroupedMasked: return d.expected_m ? d.expected_m : p.m;
    case GemmType::kMGroupedContiguous:
      return p.contiguous_layout == ContiguousLayout::kOffsets ? ceil_div(p.m, std::max(p.num_groups, 1u)) : p.m;
    default: return p.m;
  }
}

// What an arch spec other than SM90's cannot plan, and overrides outside its tiles and clusters.
void check_arch(const GemmDesc& d, const ArchSpec& arch, const GemmConfig& o) {
  const auto fail = [&](const std::string& what) { throw Error(std::string(arch.name) + " spec: " + what); };
  const GemmType t = d.problem.type;
  if (!arch.runs_kernels && t != GemmType::kNormal && t != GemmType::kBatched) fail(arch.limits);
  if (!arch.runs_kernels && o.companion == 1) fail("companion=1: the companion launch is SM90's");
  const auto listed = [](const auto& list, const auto& v) { return std::find(list.begin(), list.end(), v) != list.end(); };
  if (o.split_columns == 1 && !arch.runs_kernels) fail("split_columns=1: column-split tiles are SM90's kernel");
  if (o.pingpong == 1 && !arch.runs_kernels) fail("pingpong=1: ping-pong kernels are SM90's");
  if (o.fused_reduce == 1 && !arch.runs_kernels) fail("fused_reduce=1: the split summed in the GEMM is SM90's kernel");
  if (o.k_serpentine == 1 && !arch.runs_kernels) fail("k_serpentine=1: the K-serpentine walk is SM90's kernel");
  if (o.block_m && !listed(arch.block_ms, o.block_m) && o.split_columns != 1)
    fail("block_m " + std::to_string(o.block_m) + " is not one of its tile rows per CTA");
  // A swapped tile's width is M's side: its widths are the swapped kernel's (checked with swap_ab).
  const bool swapped_width = o.swap_ab == 1 && arch.runs_kernels && is_wgmma_swap_width(o.block_n);
  if (o.block_n && !listed(arch.block_ns, o.block_n) && !swapped_width)
    fail("block_n " + std::to_string(o.block_n) + " is not one of its tile widths");
  if (o.cluster_m && !listed(arch.clusters, ClusterShape{o.cluster_m, o.cluster_n}))
    fail("cluster " + std::to_string(o.cluster_m) + "x" + std::to_string(o.cluster_n) + " is not one of its cluster shapes");
}

// A plan that is neither split, clustered, swapped nor column-split (and so has no companion: only
// clusters of 4 take one): the plans the two moves below were measured on.
bool lone_unsplit(const GemmPlan& p) {
  const GemmKernelSpec& k = p.main.kernel;
  return p.k_splits == 1 && k.cluster == ClusterShape{1, 1} && !k.swap_ab && !k.split_columns;
}

// In the tie band, an unsplit 1x1 tile whose transpose is also tied (128x64 and 64x128) gives way
// to the one wider along N: in every run on the H200, 64x128 has beaten 128x64 where both tied. On
// 1024x1024xK, K = 1024-8192, one wave of 64x128 ran 2-6% ahead (stops 40, 41); 1024^3 9.90 against
// 10.48 us, 1024x1024x4096 20.08 against 21.39, 2048^3 35.1 against 37.7, 8448x1536x2048 93.4
// against 104.5 (bench/results/2026-12-04-h200-gpc-units.md, run A); 128x7168x2048 17.25 against
// 17.36 (stop 41). The terms rank them the other way (one consumer warpgroup's MMAs at half rate),
// but neither k-step is bound by its MMAs: both wait on L2's read requests, and L2 receives a
// quarter fewer of 64x128's (0.80M against 1.05M on 1024x1024x4096,
// bench/results/2026-12-04-h200-narrow-tile-l2-requests.md), which the terms do not model. Not for
// split tiles: summed in the cluster over two rows of tiles, 64x128 ran 7.5-15.7% behind (stop 41,
// run F); nor for clusters, where 1000^3 ran 128x64 in 1x2 1-2% ahead of 64x128 in 2x1 (stop 41).
void move_tied_transpose_first(std::vector<GemmPlan>& out, std::vector<GemmPlan>::iterator tied_end) {
  const GemmKernelSpec best = out.front().main.kernel;
  if (!lone_unsplit(out.front()) || best.block_n >= best.block_m) return;
  const auto wide = std::find_if(out.begin(), tied_end, [&](const GemmPlan& p) {
    const GemmKernelSpec& k = p.main.kernel;
    return lone_unsplit(p) && k.block_m == best.block_n && k.block_n == best.block_m && !k.pingpong;
  });
  if (wide != tied_end) std::rotate(out.begin(), wide, wide + 1);
}

// Where HBM binds and the tied pick runs one tile a CTA in one wave, a tied tile of half its width
// (two a CTA) goes first: every CTA's D store then overlaps its second tile's loads instead of
// following its last load, which the terms (HBM's bytes at one rate, stores included) do not
// see. Measured on the H200 in alternating processes: masked g6 m~20 n4096, 64x96 against
// 64x192, k2048 38.59 against 39.68 us and k4096 63.26 against 64.35, the 14 masked rows whose
// plan it leaves within -2.3% to +0.4% (bench/results/2026-12-04-h200-gpc-units.md, run G); the
// sweeps put 128x32768x512's 128x256 4.2-5.9% behind 128x128 (stops 39-43), which tied in a
// loop of the two alone (18.59 against 18.62 us, run G).
void move_tied_half_width_first(std::vector<GemmPlan>& out, std::vector<GemmPlan>::iterator tied_end) {
  const GemmPlan& front = out.front();
  const bool hbm_binds = front.cost.hbm_us > std::max({front.cost.mma_us, front.cost.ingress_us, front.cost.l2_us});
  if (!lone_unsplit(front) || front.cost.waves > 1.0 || !hbm_binds) return;
  const GemmKernelSpec wide = front.main.kernel;
  const auto half = std::find_if(out.begin(), tied_end, [&](const GemmPlan& p) {
    const GemmKernelSpec& k = p.main.kernel;
    return lone_unsplit(p) && k.block_m == wide.block_m && 2 * k.block_n == wide.block_n && !k.pingpong;
  });
  if (half != tied_end) std::rotate(out.begin(), half, half + 1);
}

}  // namespace

std::vector<GemmPlan> rank_plans(const GemmDesc& d, const DeviceFacts& f, const GemmConfig& o) {
  check_overrides(o);
  const GemmProblem& p = d.problem;
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.num_groups == 0) throw Error("gemm: empty problem");
  if (p.type == GemmType::kMGroupedMasked && d.expected_m > p.m)
    throw Error("masked gemm: expected_m " + std::to_string(d.expected_m) + " is more than max_m " + std::to_string(p.m));
  // The planner never reads d's group data (device memory for the API's calls): the cost model
  // plays a host-side surrogate of the same sizes.
  const ArchSpec& arch = arch_spec(f.arch);
  check_arch(d, arch, o);
  const PlanningProblem surrogate = planning_problem(d);
  const GemmProblem played = surrogate.problem();
  std::vector<uint32_t> bms, bns;
  if (o.block_m) bms = {o.block_m};
  else if (o.split_columns == 1) bms.assign(std::begin(kColumnSplitBlockMs), std::end(kColumnSplitBlockMs));
  else if (o.pingpong == 1) bms.assign(std::begin(kPingpongBlockMs), std::end(kPingpongBlockMs));
  else if (typical_rows(d) <= arch.block_ms.front()) bms = {arch.block_ms.front()};
  else std::ranges::copy_if(arch.block_ms, std::back_inserter(bms), [&](uint32_t bm) { return weighs_block_m(d, bm); });
  if (o.block_n) bns = {o.block_n};
  else bns.assign(arch.block_ns.begin(), arch.block_ns.end());
  std::vector<ClusterShape> clusters;
  if (o.cluster_m) clusters = {{o.cluster_m, o.cluster_n}};
  else clusters.assign(arch.clusters.begin(), arch.clusters.end());

  const bool splittable = p.type == GemmType::kNormal || p.type == GemmType::kBatched;
  if (o.k_splits > 1 && !splittable)
    throw Error("config: k_splits " + std::to_string(o.k_splits) + ": split-K is for dense and batched GEMMs only");
  if (o.split_columns == 1 && !splittable)
    throw Error("config: split_columns=1: column-split tiles are for dense and batched GEMMs only");
  if (o.pingpong == 1 && !splittable && p.type != GemmType::kKGroupedContiguous)
    throw Error("config: pingpong=1: ping-pong kernels are for dense, batched and k-grouped GEMMs only");
  if (o.k_serpentine == 1 && p.type == GemmType::kKGroupedContiguous)
    throw Error("config: k_serpentine=1 is not for k-grouped GEMMs (a group's last k-step is the one cleared)");
  if (p.k_splits != 1) throw Error("gemm: the problem to plan is unsplit (k_splits is the planner's to choose)");
  // Swapped operands: as asked for, or by the auto rule (kAutoSwapMaxM, kAutoSwapMinN).
  bool swap = o.swap_ab == 1;
  if (o.swap_ab == 1) {
    if (const char* why = swap_misfit(d))
      throw Error("config: swap_ab=1 for a " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                  std::to_string(p.k) + " problem: " + why);
    if (!arch.runs_kernels)
      throw Error(std::string("config: swap_ab=1: swapped operands are SM90's kernel (") + arch.name + " plans only)");
  } else if (o.swap_ab == -1 && arch.runs_kernels && p.m <= kAutoSwapMaxM && p.n >= kAutoSwapMinN && !swap_misfit(d) &&
             o.companion != 1 && o.fused_reduce != 1 && o.cluster_reduce != 1 && o.split_columns != 1 &&
             o.pingpong != 1 && (!o.block_m || o.block_m == kSwapBlockM) &&
             (!o.block_n || is_wgmma_swap_width(o.block_n))) {
    // ... unless the unswapped plan would be a split summed in the cluster (kAutoSwapMaxM says why).
    GemmConfig unswapped = o;
    unswapped.swap_ab = 0;
    std::vector<GemmPlan> plain = rank_plans(d, f, unswapped);
    if (plain.front().main.kernel.k_cluster > 1) return plain;
    swap = true;
  }
  std::vector<uint32_t> splits{1};
  const bool cluster_sum = o.cluster_reduce == 1;
  if (cluster_sum) {
    if (!splittable) throw Error("config: cluster_reduce=1: split-K is for dense and batched GEMMs only");
    if (!arch.runs_kernels)
      throw Error(std::string("config: cluster_reduce=1: the cluster-summed split is SM90's kernel (") + arch.name +
                  " plans only)");
    // Only split plans, and only the slice counts a cluster can be.
    splits.clear();
    for (uint32_t s : kClusterReduceSplits)
      if (o.k_splits == s || (o.k_splits == 0 && s * kMinSliceKSteps <= ceil_div(p.k, kGemmBlockK))) splits.push_back(s);
    if (splits.empty()) splits = {kClusterReduceSplits[0]};
    clusters = {{1, 1}};
  } else if (o.k_splits > 1) {
    splits = {o.k_splits};
  } else if (o.k_splits == 0 && splittable && o.companion != 1 && o.split_columns != 1 && o.pingpong != 1 &&
             uint64_t{ceil_div(p.m, kSplitTileM)} * ceil_div(p.n, kSplitTileN) * p.num_groups < f.num_sms) {
    for (uint32_t s : kSplitCandidates)
      if (s * kMinSliceKSteps <= ceil_div(p.k, kGemmBlockK)) splits.push_back(s);
  }

  std::vector<GemmPlan> out;
  // Why the first candidate that could not run could not: the narrowest tile, the most likely to
  // fit, so its reason is the one that binds (the widest's, say, was shared memory's where the
  // cause was the SM cap).
  std::string misfit;
  std::string first_misfit;  // the same, for the first split count (1 unless forced)
  bool first_fits = false;
  // A swapped tile is 128 rows over N and M rounded up to a multiple of 8 wide (or as given).
  const std::vector<uint32_t> swap_bms{kSwapBlockM};
  const std::vector<uint32_t> swap_bns{o.block_n ? o.block_n : std::min(kSwapMaxM, (p.m + 7) / 8 * 8)};
  // Where split slices are summed: by the reduce kernel, or in the GEMM where the caller asks
  // (plan_cost.cpp's kFusedReduceLatencyUs says why auto does not).
  const SliceSum sum = cluster_sum ? SliceSum::kCluster : o.fused_reduce == 1 ? SliceSum::kFused : SliceSum::kReduceKernel;
  // Auto also weighs the splits of 2, 4 and 8 summed across a cluster, with 1x1 clusters of tiles,
  // where one wave of clusters holds every tile (plan_cost.cpp's kClusterReduceLatencyUs says why).
  const bool auto_cluster_sum = arch.runs_kernels && o.cluster_reduce == -1 && o.fused_reduce != 1 && !swap &&
                                splits.size() > 1 && (!o.cluster_m || (o.cluster_m == 1 && o.cluster_n == 1));
  // Every tile and cluster shape of `shapes` for split `s`, summed by `how`; why the first misfit
  // could not run goes into `why` (when it is empty).
  // No unswapped tile wider than the problem, unless asked for (the narrowest the request can run
  // is always weighed: for column-split tiles, the narrowest whose half is a wgmma split width).
  uint32_t narrowest = arch.block_ns.front();
  if (o.split_columns == 1)
    for (uint32_t bn : arch.block_ns)
      if (bn % kColumnSplitWarpgroups == 0 && is_wgmma_split_width(bn / kColumnSplitWarpgroups)) {
        narrowest = bn;
        break;
      }
  const auto wider_than_problem = [&](uint32_t bn) {
    return !o.block_n && bn > (p.n + 15) / 16 * 16 && bn > narrowest;
  };
  const auto weigh = [&](uint32_t s, SliceSum how, const std::vector<ClusterShape>& shapes, std::string& why) {
    for (uint32_t bm : swap ? swap_bms : bms)
      for (uint32_t bn : swap ? swap_bns : bns)
        for (const ClusterShape& cs : shapes) {
          if (!swap && wider_than_problem(bn)) continue;
          // K-grouped plans take no cluster of 4 unless the caller asks for one: on all four shapes
          // of the kgrouped suite 4x1 and 2x2 ran 5-20% slower than 2x1 (1905.6 and 2039.5 against
          // 1802.8 us on kg4 4096x7168 k16864; bench/results/2026-12-01-h200-grouped.md, cluster
          // compare), though the terms put 4x1 up to 11% ahead (its B multicast to 4 saves L2
          // lines, which bind where the groups' boxes start off a line). What they miss there is
          // not measured apart.
          if (p.type == GemmType::kKGroupedContiguous && cs.size() == 4 && !o.cluster_m) continue;
          std::string this_why;
          if (arch.cluster_divides_shape && !cluster_divides(p, bm, bn, cs)) {
            this_why = "cluster " + std::to_string(cs.m) + "x" + std::to_string(cs.n) + " does not divide the " +
                       std::to_string(ceil_div(p.m, bm)) + "x" + std::to_string(ceil_div(p.n, bn)) + " blocks of " +
                       std::to_string(bm) + "x" + std::to_string(bn) + " (" + arch.name + ": no partial cluster)";
          } else if (std::optional<GemmPlan> plan = evaluate(d, played, f, o, bm, bn, cs, s, swap, how, this_why)) {
            out.push_back(std::move(*plan));
            continue;
          }
          if (why.empty()) why = std::move(this_why);
        }
  };
  // Auto also weighs 192-row column-split tiles by rule (kColumnSplitAutoBlockM says where).
  const bool auto_column_split = arch.runs_kernels && o.split_columns == -1 && o.pingpong != 1 && splittable && !swap &&
                                 o.companion != 1 && (!o.block_m || o.block_m == kColumnSplitAutoBlockM) &&
                                 rows_off_a_line(d);
  GemmConfig column_split = o;
  column_split.split_columns = 1;
  const auto weigh_column_split = [&] {
    std::string why;  // a column-split misfit says nothing about the caller's overrides
    for (uint32_t bn : bns)
      for (const ClusterShape& cs : clusters) {
        if (cs.size() > kColumnSplitAutoMaxCluster || wider_than_problem(bn)) continue;
        if (std::optional<GemmPlan> plan =
                evaluate(d, played, f, column_split, kColumnSplitAutoBlockM, bn, cs, 1, false, sum, why))
          out.push_back(std::move(*plan));
      }
  };
  for (uint32_t s : splits) {
    weigh(s, sum, clusters, misfit);
    if (s == 1 && auto_column_split) weigh_column_split();
    if (auto_cluster_sum && std::ranges::find(kClusterReduceSplits, s) != std::end(kClusterReduceSplits)) {
      std::string cluster_misfit;  // not the unsplit kernel's: it says nothing about an override
      weigh(s, SliceSum::kCluster, {ClusterShape{1, 1}}, cluster_misfit);
    }
    if (s == splits.front()) {
      first_fits = !out.empty();
      first_misfit = misfit;
    }
  }
  // Split-K is a speed choice, never a way round an override that the unsplit kernel refuses.
  if (!first_fits) throw Error("config: " + (first_misfit.empty() ? std::string("no candidate") : first_misfit));
  // The plans within kTieFraction of the cheapest come first, in the tie order; the rest follow
  // by estimate. (Pairwise "ties" would not be an ordering: a ~ b and b ~ c without a ~ c.)
  const bool larger_cluster_wins = arch.cluster_tie == ClusterTie::kLarger;
  const bool pairs_along_m_first = arch.cluster_tie == ClusterTie::kSmaller && p.type == GemmType::kKGroupedContiguous;
  std::stable_sort(out.begin(), out.end(),
                   [](const GemmPlan& a, const GemmPlan& b) { return a.cost.total_us < b.cost.total_us; });
  const double cheapest_us = out.front().cost.total_us;
  const double tied_below = cheapest_us * (1.0 + kTieFraction);
  const auto tied_end = std::find_if(out.begin(), out.end(), [&](const GemmPlan& p) { return p.cost.total_us > tied_below; });
  std::stable_sort(out.begin(), tied_end, [=](const GemmPlan& a, const GemmPlan& b) {
    if (a.launches_reduce_kernel() != b.launches_reduce_kernel()) return !a.launches_reduce_kernel();
    if (a.k_splits != b.k_splits) return a.k_splits < b.k_splits;
    const GemmKernelSpec &ka = a.main.kernel, &kb = b.main.kernel;
    if (pairs_along_m_first && (ka.cluster == kKGroupedTieCluster) != (kb.cluster == kKGroupedTieCluster))
      return ka.cluster == kKGroupedTieCluster;
    if (ka.cluster.size() != kb.cluster.size())
      return larger_cluster_wins ? ka.cluster.size() > kb.cluster.size() : ka.cluster.size() < kb.cluster.size();
    if (a.cost.mma_us != b.cost.mma_us) return a.cost.mma_us < b.cost.mma_us;
    return ka.block_m * ka.block_n > kb.block_m * kb.block_n;
  });
  // A split the reduce kernel sums gives way to the cheapest split summed in the cluster within
  // kClusterSumTieFraction. (None is in the tie band, or the order above would have put it first;
  // past the band the plans are in estimate order, so the first found is the cheapest.)
  if (out.front().launches_reduce_kernel()) {
    const double cluster_sum_below = cheapest_us * (1.0 + kClusterSumTieFraction);
    const auto summed = std::find_if(out.begin(), out.end(), [&](const GemmPlan& p) {
      return p.main.kernel.k_cluster > 1 && p.cost.total_us <= cluster_sum_below;
    });
    if (summed != out.end()) std::rotate(out.begin(), summed, summed + 1);
  }
  // Two moves within the tie band the terms cannot make (each function says why).
  move_tied_transpose_first(out, tied_end);
  move_tied_half_width_first(out, tied_end);
  // Ping-pong by rule in front of the cooperative tile it replaces (PingpongReach says where), for
  // dense and batched problems: k-grouped ones in turns ran 14-52% behind their cooperative pick
  // (bench/results/2026-12-04-h200-pingpong-epilogues.md, run E), and evaluate refuses m-grouped
  // ones (spec.cuh). (A tile of 192 or more columns is never swapped, and a 1x1 cluster has no
  // companion.)
  const GemmKernelSpec& front = out.front().main.kernel;
  const PingpongReach& reach = d.has_c && d.out == DType::kFP32 ? kPingpongReachFp32C : kPingpongReach;
  const bool auto_pingpong =
      arch.runs_kernels && splittable && o.pingpong == -1 && !o.block_n &&
      (!o.block_m || o.block_m == kPingpongAutoBlockM) &&
      out.front().k_splits == 1 && !front.split_columns && front.block_m == kPingpongAutoBlockM &&
      front.block_n >= reach.from_block_n && front.cluster == ClusterShape{1, 1} &&
      ceil_div(p.k, kGemmBlockK) <= reach.max_k_steps && out.front().cost.waves >= reach.min_waves;
  if (auto_pingpong) {
    GemmConfig turns = o;
    turns.pingpong = 1;
    std::string why;
    if (std::optional<GemmPlan> plan = evaluate(d, played, f, turns, kPingpongAutoBlockM, kPingpongAutoBlockN,
                                                ClusterShape{1, 1}, 1, false, sum, why))
      out.insert(out.begin(), std::move(*plan));
  }
  // The chosen plan's band (the order of units moves no term of the ranking; the alternatives keep
  // kDefaultSwizzle, and each becomes a chosen plan of its own when a caller forces its tile).
  if (o.swizzle == 0) out.front().schedule.swizzle = band_height(out.front(), played, f);
  return out;
}

GemmPlan plan_gemm(const GemmDesc& d, const DeviceFacts& f, const GemmConfig& o) { return rank_plans(d, f, o).front(); }

GemmProblem GemmPlan::kernel_problem() const { return swapped_if(desc.problem, main.kernel.swap_ab); }

uint32_t GemmPlan::workspace_ld() const { return (desc.problem.n + 3) / 4 * 4; }

uint64_t GemmPlan::workspace_bytes() const {
  if (k_splits <= 1 || main.kernel.k_cluster > 1) return 0;  // summed across the cluster: none
  return kSplitCounterBytes +
         uint64_t{k_splits} * desc.problem.num_groups * desc.problem.m * workspace_ld() * sizeof(float);
}

uint64_t split_counters(const GemmProblem& p, const GemmKernelSpec& k) {
  return uint64_t{p.num_groups} * ceil_div(p.m, k.block_m) * ceil_div(p.n, k.block_n) * k.consumer_warpgroups;
}

}  // namespace tilecast::plan
