// The cost model, with its numbers worked for 8192^3 on the H200 (block 128x256, k-step of 64):
//   one k-step of one CTA is 2 * 128 * 256 * 64 = 4.19 MFLOP; at 989 TFLOPS over 132 SMs an SM
//   does it in 0.56 us. 2048 tiles of 128 k-steps on 132 SMs: 15.5 waves, makespan 16 tiles =
//   2048 k-steps = 1.15 ms (MMA bound).
//   SM ingress: each k-step brings (128 + 256) * 64 * 2 = 48 KiB into the SM, multicast or not
//   (every destination receives the box): 2048 k-steps at 10 TB/s / 132 SMs = 1.33 ms. So the
//   tile is ingress-bound at 87% of the tensor rate, whatever the cluster.
//   L2 lookups: the busiest CTA's own requests in lines, 48 KiB per k-step without multicast
//   and 32 KiB with B shared by 2 CTAs along M, at the same rate: they bind only where rows start
//   off a line (lines_per_box_row).
//   Measured on the H200: 1x1 1573 us, 2x1 1573 (bench/results/2026-12-01-h200-multicast.md).
// The estimate is the largest of the on-chip times (MMA, ingress, L2, one SM's HBM stream) and the
// HBM time combined as a p-norm (kHbmOverlapPower), times the charges for what those terms were
// measured to miss (clusters of 4 in a line, heavy epilogues on 256-wide tiles).
// The cheapest plan wins, and within 5% (kTieFraction) one launch before a split that needs the
// reduce kernel behind it (within 10% for a split summed in the cluster: kClusterSumTieFraction),
// then fewer split-K slices, then the smaller cluster on SM90 (less coupling, easier placement;
// k-grouped problems a cluster of 2 along M first, kKGroupedTieCluster; the larger on SM100, S6),
// then the smaller MMA makespan (kTieFraction says why), then the wider tile.
// Every rate is the device's (device_facts.hpp), every tile and cluster the arch spec's
// (arch_spec.hpp).
#include "tilecast/plan/gemm_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

#include "tilecast/plan/grouped_surrogate.hpp"
#include "tilecast/plan/l2_reuse.hpp"
#include "tilecast/plan/simulator.hpp"

namespace tilecast::plan {
namespace {

// Clusters along N (1x2, 1x4: the CTAs share A) ran 3-17% slower than the same tiles in clusters
// along M on every shape measured on the H200 at equal or fewer waves (4096x576x7168 10%, 8192^3
// 3%, 4096x2112x7168 3%, 4097^3 with 176-wide tiles 17%); the terms here do not say why, so they
// are charged 5%. (The 4097^3 rows among them start off a line, which the L2 line term below now
// charges as well.) Not column-split tiles: 192x176 and 192x192 ran 0.3-2.9% faster in 1x2 than
// in 2x1 on all four shapes and six pairs timed (4097^3, 4104^3, 3000^3, 8200^3;
// bench/results/2026-12-03-h200-l2-lines.md, runs A and B).
constexpr double kAlongNSlowdown = 1.05;
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
// more slices cost beyond their workspace bytes (kReduceLaunchUs is stated, not calibrated). Of
// the rows with K >= 10240 and N <= 1024 that it left (estimated 11-25% slower, 8-13% faster),
// 7x1000x16384 and 8x1024x16384 take the cluster-summed split since operand reads are charged at
// the rate they reach (kOperandStreamHbmFraction); 1x768x16384 keeps the reduce kernel's, 8.5%
// behind a swapped plan (bench/results/2026-12-02-h200-operand-stream.md).
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
// What the companion launch costs beyond the static kernel where both run the same rounds: the
// dynamic-unit kernels claim each unit from a global counter (an atomic round trip before the
// first load of each unit) and count themselves done, and the companion's grid waits for the
// main one before it exits. Measured on the H200 as the time a 2x2, 4x1 or 1x4 plan with the
// companion took over its static twin where the clusters of 4 held every unit at once (the
// companion had nothing to do): 1000^3 with 128x96 tiles +2.4, +1.9 and +2.3 us, 128x7168x2048
// with 128x64 in 1x4 +2.3 us; with the companion on a side stream forked and joined by events
// before, 2.2-2.5 us on the same rows (bench/results/2026-12-03-h200-companion.md).
constexpr double kDynamicUnitsUs = 2.3;
// Unit-rows per L2 band when the caller does not say, unless band_height finds one that reads
// kBandMinSaving less from HBM. Where the operands fit in L2 the order only moves what L2's
// coalescer merges, and 8 was as good as any (4096x576x7168,
// bench/results/2026-12-01-h200-alignment.md).
constexpr uint32_t kDefaultSwizzle = 8;
// A band taller than this keeps no L2 locality, and swizzle * units_n must fit 32 bits.
constexpr uint32_t kMaxSwizzle = 64;
// Column-split tiles (GemmConfig::split_columns, only when asked for; spec.cuh's rules): their
// row blocks, from kColumnSplitMinBlockM to kColumnSplitMaxBlockM.
constexpr uint32_t kColumnSplitBlockMs[] = {kColumnSplitMinBlockM, 192, kColumnSplitMaxBlockM};
// Ping-pong tiles (GemmConfig::pingpong; spec.cuh's rules): their row blocks, one warpgroup's atoms.
constexpr uint32_t kPingpongBlockMs[] = {64, 128};
// The SM90 kernel's row blocks: 64, 128 and 192 (one, two and three consumer warpgroups), as
// check_overrides takes them (the planner takes the arch spec's).
constexpr uint32_t kBlockMs[] = {64, 128, 192};
// 64-row tiles (one consumer warpgroup) ran at about half the rate of 128-row ones on the H200
// (issue #12: one warpgroup cannot keep the tensor cores fed between its wgmma waits). A bound
// beside shared memory's, not a factor on it: 64x128 tiles ran 128x7168x16384 unsplit in 72.7 us,
// 0.28 us for each of a CTA's 256 k-steps (fixed costs included), where the product of the two
// said 0.42 and the larger of them 0.28 (bench/results/2026-12-02-h200-operand-stream.md).
constexpr double kOneWarpgroupSlowdown = 2.0;
// One SM's stream of operand bytes that come from HBM (first touches; the rest hit L2): measured
// on the H200, 128x576x7168 ran its 4 CTAs of 128x144 in 35 us, each pulling 112 k-steps of an
// 18 KiB B tile from HBM: 57 GB/s per SM (bench/results/2026-12-01-h200-epilogue.md). So a
// problem of few tiles cannot reach the roofline however fast the tensor cores are, and a split
// puts more SMs on the stream.
constexpr double kSmHbmStreamBytesPerS = 57e9;
// ... and however few bytes a stage brings, a CTA whose stages wait on HBM cannot take them
// faster than one turn of its ring (a stage released, refilled from HBM and landed) per `stages`
// k-steps. Measured on the H200 (bench/results/2026-12-04-h200-ring-turn.md): 1x4096x7168 in
// unsplit 64x64 tiles (one CTA on each of 64 SMs, B read once, 8 KiB of it a k-step) ran 0.78,
// 0.38, 0.32 and 0.29 us a k-step at 2, 4, 6 and 8 stages: a turn of 1.6, 1.5, 1.9 and 2.3 us,
// where the bytes above say 0.14; 128x576x7168's 128x144 tiles (6 stages, the figure above) 0.31,
// a turn of 1.9. The deeper rings' turn is taken, as these rows' rings are deep.
constexpr double kHbmRingTurnUs = 2.0;
// The share of the device's copy rate (DeviceFacts::hbm_tb_per_s, 4.2 TB/s on the H200) that a
// GEMM's operand reads reach. Measured as the slope of time over K on decode-sized rows, where B
// is read once: 23 pairs (m 1-16, n 576-1024, k 7168 and 16384, the best plan of a kind at each)
// gave 2.6-3.2 TB/s, median 2.95, and cuBLAS's own kernels 3.0-3.2
// (bench/results/2026-12-02-h200-operand-stream.md).
constexpr double kOperandStreamHbmFraction = 0.70;
// How the HBM time and the on-chip bound (MMA, ingress, L2, the SM's stream) combine: their
// p-norm, not the larger, because neither resource runs flat out while the other binds (rows
// where both are near: the plans below HBM's bound differ by up to 12% in time). p is fitted: on
// the 24 rows of run A (m 1-128, n 576-7168, k 4096-16384) p = 2, 3, 4 and 8 put the pick within
// 5% of the best on 15, 21, 20 and 16 rows; large problems are MMA-bound by far and move less than
// 1% (hbm / mma <= 0.3 adds at most 0.9%).
constexpr double kHbmOverlapPower = 3;
// Split-K counts the planner weighs (each up to the k-steps of K / kMinSliceKSteps).
constexpr uint32_t kSplitCandidates[] = {2, 3, 4, 6, 8, 12, 16, 24, 32};
// A slice shorter than this fills and drains the operand ring with nothing to overlap.
constexpr uint32_t kMinSliceKSteps = 4;
// The reduce kernel's fixed cost: its launch behind the GEMM on the same stream and its one short
// wave (about 2 us between dependent launches on the H200, plus the ramp of a memory-bound
// kernel): a stated figure. Measured against the same tile and split summed in the cluster (24
// pairs in the sweeps of bench/results/2026-12-02-h200-operand-stream.md), the reduce kernel's
// plans ran 0.8-3.9 us slower (median 2.4) where the terms say 0.5-1.5 (median 1.0): about 1.7 us
// more than this. At 4.7 the tie order then takes plans measured slower (128x4096x7168 64x64
// unsplit, +11%; 333x2112x7168 128x96 summed in clusters of 2, +8.6%), so it stays stated until
// the tie order is revisited with it.
constexpr double kReduceLaunchUs = 3.0;
// Split-K is weighed only for problems with fewer of the largest tiles (128 x 256) than SMs: with
// a wave of those or more every SM has a tile and its K, and a split only adds the workspace's
// traffic (it also keeps planning 8192^3 as fast as before).
constexpr uint32_t kSplitTileM = 128, kSplitTileN = 256;
// A workspace up to this fraction of L2 is written and read back there, not through HBM.
constexpr double kWorkspaceL2Fraction = 0.5;
// The fused reduce (GemmKernelSpec::fused_reduce) is weighed only where the caller asks for it
// (fused_reduce=1): on the H200 it ran 5-26% slower than the reduce kernel on every split row but
// one, which it tied (64x4096x7168; bench/results/2026-12-02-h200-producer.md), so auto never fuses.
// Its terms then rank the fused plans among themselves: the tile's last warpgroup to arrive reads
// the k_splits partial tiles back from L2 at its SM's share of the L2 -> SM rate, after one round
// trip for the counter's atomic and the first loads (a stated figure).
constexpr double kFusedReduceLatencyUs = 1.0;
// Split-K summed across a cluster (GemmKernelSpec::k_cluster; GemmConfig::cluster_reduce). Slice
// counts: the cluster sizes DeviceFacts knows how many of resident (2, 4, 8).
constexpr uint32_t kClusterReduceSplits[] = {2, 4, 8};
// Auto weighs a cluster plan only where one wave of its clusters holds every tile. Measured on the
// H200 against the reduce kernel at the same tile and split (bench/results/2026-12-02-h200-cluster-
// reduce.md, run F): 0.93-1.02 where one wave of clusters held the tiles (255x576x7168 and
// 128x576x7168 in 8 slices, 7x1000x16384, 128x7168x16384 in 2), 1.15-1.81 where the tiles took
// several waves of clusters (1x4096x4096 with 128x64 tiles in 8 slices: 64 tiles, 15 clusters of 8
// resident): each wave then waits for its own handshakes, and 8-CTA clusters leave 12 SMs idle.
// Its terms: the two cluster handshakes of a tile, measured after the k-loop (partial tiles in
// 1.1 us, drained 0.9 us after the band sum; 255x576x7168, 128x96 tiles, 8 slices, run F), then
// each CTA reads one tile's worth of FP32 partials from the cluster's shared memories, at its SM's
// share of the L2 -> SM rate (a stand-in for DSMEM's, not measured apart).
constexpr double kClusterReduceLatencyUs = 2.0;
// The partial tile takes shared memory from the operand ring, which the terms do not charge: auto
// weighs a cluster plan only where its ring keeps at least this many stages. Measured (sweep of
// run G, same page): the two picks at 3 stages (128x144 tiles; 128x2112x7168 in 8 slices,
// 128x4096x7168 in 4) ran 6% and 15% slower than the best timed config, where the picks at 4 and
// 5 stages (128x128 on 128x7168x16384, 128x96 on 255x576x7168) were the best timed.
constexpr uint32_t kClusterReduceMinStages = 4;
// How many microseconds of k-steps (k_step_seconds) a lone CTA's operand ring must hold where it
// gives stages up to C's slab buffers (ring_stages): enough to cover an operand load. Measured on
// the H200 with C, tiles forced at 1x1 at each stage count that fits, on the fp32c suite's 8 shapes
// and 4 with BF16 C (bench/results/2026-12-03-h200-c-buffers.md, run A). FP32 C: 128x192 at 3 stages
// (1.37 us of k-steps, 6 of 6 slabs buffered) ran 4-24% slower than at 4 (1.82 us, 4 of 6),
// 128x176 at 3 (1.29 us) 5-15% slower than at 4 (1.72 us, 4 of 6), which ran 5-20% faster than at
// 5 (2 of 6); 128x256 at 3 (1.68 us, 5 of 8) 6-28% faster than at 4 (2 of 8). 128x144 at 4 (1.50
// us, 5 of 5) and at 5 (3 of 5) tied over the 8 rows (geomean 0.99, -8% to +5%), and on the one
// row that takes 144, 4096x576x7168 (one tile per CTA), 5 was 4% faster (run B). BF16 C: 128x176 at
// 4 (3 of 3) 2-6% faster than at 5 (2 of 3), 128x256 at 3 (4 of 4) 4-9% faster than at 4 (2 of 4).
// Any value in (1.50, 1.68] takes the faster of each; this is the middle.
constexpr double kRingCoverUs = 1.6;
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
// pick's 27-28, until the stream term charged its ring's turn (kHbmRingTurnUs): now it is 64x64 in
// 2 slices summed in the cluster, 3-5% faster than the swapped pick in one loop (1x4096x4096, 1x,
// 8x and 16x4096x7168; bench/results/2026-12-04-h200-ring-turn.md, runs A and D).
constexpr uint32_t kAutoSwapMaxM = 16;
constexpr uint32_t kAutoSwapMinN = 2048;
// A wgmma narrower than this is charged as if it were this wide: an m64nNk16 is issued and
// retired at a fixed cost that a narrow N does not shrink (a stated figure for the swapped
// kernel's 8..56-wide tiles, to be calibrated by the bench rows above).
constexpr uint32_t kSwapWgmmaFloorN = 32;
// The swapped epilogue's element stores (epilogue_swapped.cuh: 8 lanes write 8 consecutive
// elements of a row of D, 16 or 32 bytes) reach this fraction of HBM's write rate (stated, like
// the floor above). Charged after the main loop: with one wave nothing overlaps it.
constexpr double kSwappedStoreEfficiency = 0.25;

// The lines of L2 one 128-byte box row reads, on average over rows whose addresses are multiples
// of `alignment` bytes: one where the row starts on a line, two where it starts inside one (then
// a multicast, read once for all its destinations, saves twice as much). Measured on the H200
// (sweep, bench/results/2026-12-01-h200-alignment.md): 4097^3 (rows of 8208 bytes, 7 in 8 off a
// line) ran 128x176 tiles in clusters of 2x2 in 348-350 us without multicast, 281 and 262 us
// multicasting one operand, 220 us both: the lines read over the time are 10.0-10.3 TB/s in all
// four, the L2 rate of the aligned shapes; 4095x7167x4104 and 8191x8193x520 (also off a line)
// ran 30-47% faster with multicast, aligned shapes within 2% of 1x1. All of it with the operands'
// 256-byte L2 promotion (kPromoted128LineCost says what 128 bytes changed).
double lines_per_box_row(uint8_t alignment) {
  const double aligned_share = std::min<double>(alignment, kL2LineBytes) / kL2LineBytes;
  return 2.0 - aligned_share;
}

// What a line of rows that start off a line costs L2 against the 10 TB/s above, in dense and
// batched problems, now that such rows ask for 128-byte promotion (starts_off_a_line, the test
// api::operand_promotion makes too). Measured on the H200 with it: the ten plans in clusters of 2 whose L2 term
// binds on 4097^3 and 4095x7167x4104 ran in 0.80-0.95 of that term, median 0.84 (128x256 2x1 0.89
// and 0.91, 128x176 and 128x192 2x1 and 1x2 0.80-0.84, 192x176 column-split 1x2 and 2x1 0.95;
// bench/results/2026-12-03-h200-l2-lines.md, run A). Charged at the median. K-grouped rows (every
// box 16 bytes into a line) ran as the full cost says with the same promotion: their four suite
// rows, 128x256 in 2x1, in 0.97-1.08 of the estimate it gives (2026-12-03-h200-companion.md, run
// G), so they keep it. What makes the two differ is not measured apart.
constexpr double kPromoted128LineCost = 0.84;

double line_cost(uint8_t alignment, GemmType type) {
  const bool measured = type == GemmType::kNormal || type == GemmType::kBatched;
  return measured && starts_off_a_line(alignment) ? kPromoted128LineCost : 1.0;
}

// Clusters of 4 in a line (4x1, 1x4) ran 8-11% slower than their terms say, 2x2 within 3%: 4x1
// with 128x256 tiles on 4095x7167x4104 in 354.4 us where its ingress term gives 337 (at the
// 1830 MHz the rates are quoted for, 378 us measured against 337), 128x192 on 4097^3 in 250.1
// against 248 (270 at 1830 MHz), 2x2 with 128x176 on 4097^3 222.8 against 234 (241)
// (bench/results/2026-12-01-h200-alignment.md). Charged on the estimate.
constexpr double kLinearClusterOf4Slowdown = 1.08;
// A heavy epilogue (C and a bias, or FP32 output with either) on a 256-wide tile runs slower than
// the terms say, which do not model the epilogue: with C, 3 of its 8 FP32 slabs per warpgroup wait
// for their loads inside the epilogue at 1x1 (ring_stages leaves it 5 buffers at 3 stages), 6 in a
// cluster (2 buffers at 4 stages; the kgrouped rows, which keep 256 at either charge). Measured with
// tiles forced at 1x1, against the best of 144, 176 and 192 at their own stages, 256's time over
// theirs divided by the terms' ratio (fp32c suite, bench/results/2026-12-03-h200-c-buffers.md):
// 1.05 on 8192^3, 1.07 on 4096x7168x16384 and 4096x7168x2048, 1.09 on 4096x32768x512,
// 4096x4096x7168 and 4096x24576x1536 (where 192 and 256 tied). 1.08 is their middle: it takes
// 256 where it won by 4-8% and 192 where 256 lost by 7%. (At 4 stages, 2 of 8 slabs buffered,
// it was 1.08-1.28, and 1.18 was charged; bench/results/2026-12-01-h200-trap.md.)
constexpr double kHeavyEpilogueWideSlowdown = 1.08;
constexpr uint32_t kHeavyEpilogueWideFrom = 256;

bool heavy_epilogue(const GemmDesc& d) {
  return (d.has_c && d.has_bias) || (d.out == DType::kFP32 && (d.has_c || d.has_bias));
}

// Where the planner takes a k-group's first column to start: 16 bytes into a line, as the
// surrogate's even split of K puts them (4 groups of 4216 columns on the kgrouped suite's 16864:
// 8432 bytes apart, 7 in 8 starts off a line).
constexpr uint8_t kKGroupStartAlignment = 16;

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

// Why `d` cannot run with swapped operands, or null (the rules of swap_ab_error in spec.cuh, as
// the caller's problem states them).
const char* swap_misfit(const GemmDesc& d) {
  if (d.problem.m > kSwapMaxM) return "m is more than 64 (the swapped tile's width is M's side)";
  if (d.layout != GemmLayout::kNT) return "the layout is not NT (swapped operands stay K-major)";
  if (d.problem.type != GemmType::kNormal && d.problem.type != GemmType::kBatched)
    return "it is for dense and batched GEMMs only";
  return nullptr;
}

// How much longer than its MMAs a k-step takes because shared memory cannot feed them. Per k-step
// on SM90 each consumer warpgroup's wgmmas read its rows of A and all of B, and the TMA writes the
// stage, against 128 bytes per clock per SM; the tensor cores do 4096 FLOP per clock. 128x256
// tiles are balanced (1024 clocks each way); 128x176 need 784 clocks of shared memory for 704 of
// MMA, which is why they lost to 128x256 on 4096x24576x1536 (468 against 410 us on the H200)
// though they fill the waves better. The FLOP per clock are the device's: on a part whose tensor
// rate is cut (the H20's quarter) shared memory is never the bound. On SM100 a CTA of a 2-CTA
// pair reads and loads half of B, and its MMA reads each operand once.
double smem_slowdown(const GemmKernelSpec& k, const ArchSpec& arch, const DeviceFacts& f) {
  const double row_bytes = kGemmBlockK * 2.0;
  const bool pair = arch.mma_cta_group > 1 && k.cluster.m % arch.mma_cta_group == 0;
  const double b_rows = pair ? static_cast<double>(k.block_n) / arch.mma_cta_group : k.block_n;
  const double b_reads = arch.b_read_per_warpgroup ? static_cast<double>(k.consumer_warpgroups) : 1.0;
  const double mma_reads = k.block_m * row_bytes + b_reads * b_rows * row_bytes;
  const double tma_writes = (static_cast<double>(k.block_m) + b_rows) * row_bytes;
  const double smem_clocks = (mma_reads + tma_writes) / arch.smem_bytes_per_clock;
  const double mma_clocks = 2.0 * k.block_m * k.block_n * kGemmBlockK / f.mma_flops_per_clock;
  return std::max(1.0, smem_clocks / mma_clocks);
}

// One k-step of one CTA: its MMAs, at half the rate with one consumer warpgroup, or shared
// memory's bound (smem_slowdown), whichever is slower. A swapped tile's narrow wgmma is charged at
// least kSwapWgmmaFloorN wide; shared memory's bound is its own and, for unswapped tiles, always
// the larger.
double k_step_seconds(const GemmKernelSpec& k, const DeviceFacts& f) {
  const double sm_flops = f.peak_bf16_tflops * 1e12 / f.num_sms;
  const double bm = k.block_m, bn = k.block_n;
  const double mma_s = 2.0 * bm * (k.swap_ab ? std::max<double>(bn, kSwapWgmmaFloorN) : bn) * kGemmBlockK / sm_flops;
  const double one_warpgroup = k.consumer_warpgroups == 1 ? kOneWarpgroupSlowdown : 1.0;
  return std::max(mma_s * one_warpgroup, 2.0 * bm * bn * kGemmBlockK / sm_flops * smem_slowdown(k, arch_spec(f.arch), f));
}

// The operand ring's depth. Without C, the deepest that fits (deepest_stages). With C the ring
// shares shared memory with the C slab buffers, and a slab past the buffers waits inside the
// epilogue for its load from HBM (the loader can fetch it only once an earlier slab has been
// stored from its buffer), so a lone CTA's ring keeps only the stages that cover kRingCoverUs of
// k-steps and the rest of shared memory buffers C, up to every slab of a warpgroup's tile. A
// cluster's keeps the deepest: a multicast stage is refilled only once every CTA of the cluster
// has released it: the kgrouped suite's 128x256 tiles in clusters of 2 ran 2-7% slower at 3
// stages (5 of 8 slabs buffered) than at 4 (2 of 8), where the same tiles at 1x1 ran 2-12% faster
// at 3 (bench/results/2026-12-03-h200-c-buffers.md, runs B and E).
uint32_t ring_stages(GemmKernelSpec k, const DeviceFacts& f) {
  const uint32_t deepest = deepest_stages(k);
  if (deepest == 0 || !gemm_geometry(k).c_by_tma || k.cluster.size() > 1) return deepest;
  const uint32_t cover = std::max(2u, static_cast<uint32_t>(std::ceil(kRingCoverUs * 1e-6 / k_step_seconds(k, f))));
  uint32_t all_buffered = 2;  // the deepest ring beside a buffer for every slab (2 stages at least)
  for (uint32_t stages = deepest; stages > 2; --stages) {
    k.stages = stages;
    const GemmGeometry g = gemm_geometry(k);
    if (g.slab_buffers >= c_slab_buffers_for_every_slab(g)) {
      all_buffered = stages;
      break;
    }
  }
  return std::min(deepest, std::max(all_buffered, cover));
}

// S6: on an arch whose cluster must divide the shape, the row blocks of every group are whole
// multiples of cluster.m and the column blocks of cluster.n.
bool cluster_divides(const GemmProblem& p, uint32_t bm, uint32_t bn, const ClusterShape& cs) {
  return ceil_div(p.m, bm) % cs.m == 0 && ceil_div(p.n, bn) % cs.n == 0;
}

TileConfig schedule_of(const GemmKernelSpec& k, const GemmConfig& o) {
  TileConfig t;
  t.block_m = k.block_m;
  t.block_n = k.block_n;
  t.block_k = kGemmBlockK;
  t.cluster = k.cluster;
  t.swizzle = o.swizzle ? o.swizzle : kDefaultSwizzle;
  t.multicast_a = o.multicast_a != 0;
  t.multicast_b = o.multicast_b != 0;
  return t;
}

uint32_t sm_budget(const DeviceFacts& f, const GemmConfig& o) {
  return o.max_sms ? std::min(o.max_sms, f.num_sms) : f.num_sms;
}

// Bytes through HBM if each operand and the output moved once: per group its rows of A, its B
// (where it has rows) and its rows of D (read too, with C).
// A's and B's bytes, each read once.
double operand_bytes(const GemmProblem& p) {
  double a = 0, b = 0;
  for (const GroupSize& g : group_sizes(p)) {
    a += static_cast<double>(g.rows) * g.k;
    if (g.rows) b += static_cast<double>(p.n) * g.k;
  }
  return (a + b) * 2;
}

double hbm_bytes(const GemmProblem& p, DType out, bool has_c) {
  double d = 0;
  for (const GroupSize& g : group_sizes(p)) d += static_cast<double>(g.rows) * p.n;
  return operand_bytes(p) + d * dtype_bytes(out) * (has_c ? 2 : 1);
}

// The band height (unit-rows) of a plan whose operands do not fit in L2: the one whose walk reads
// the fewest operand bytes from HBM in the LRU model of l2_reuse.hpp. A wave of G resident units
// walks K together, so what it reads stays in L2 only while the wave's rows and columns over all of
// K fit there: past that each wave reads its own again, and a band h units tall, holding the wave
// as h x G/h units, reads fewest at h = sqrt(G x unit columns / unit rows); where K is short, a band
// sweeps its rows of A along N from L2, and a taller band reads B fewer times. Candidates: the
// powers of two up to the grid's height, that square root and the whole height; kDefaultSwizzle
// unless one reads kBandMinSaving less. Measured on the H200
// (bench/results/2026-12-04-h200-last-wave.md, run C): 8192^3 with 128x256 tiles on 132 SMs (16:
// 1.20 GB in the model) read 1.23 GB from HBM against 1.49 at 8, and at the power cap a GEMM took
// 1.2% less time and 1.5-3% less energy than at 8. Dense unsplit static plans of more than one wave
// only; elsewhere kDefaultSwizzle.
constexpr double kBandMinSaving = 0.05;
uint32_t band_height(const GemmPlan& plan, const DeviceFacts& f) {
  const GemmProblem p = plan.kernel_problem();
  if (p.type != GemmType::kNormal || plan.k_splits > 1 || plan.companion ||
      operand_bytes(p) <= static_cast<double>(f.l2_bytes))
    return kDefaultSwizzle;
  const TileConfig& t = plan.schedule;
  const uint32_t units_m = ceil_div(ceil_div(p.m, t.block_m), t.unit_tiles_m());
  const uint32_t units_n = ceil_div(ceil_div(p.n, t.block_n), t.unit_tiles_n());
  const uint32_t resident_units = plan.main.clusters;
  if (static_cast<uint64_t>(units_m) * units_n <= resident_units) return kDefaultSwizzle;  // one wave
  const auto hbm_bytes_at = [&](uint32_t band) {
    TileConfig banded = t;
    banded.swizzle = band;
    return operand_hbm_bytes(p, banded, resident_units, f.l2_bytes);
  };
  const uint32_t tallest = std::min(units_m, kMaxSwizzle);
  const double unit_rows = static_cast<double>(t.unit_tiles_m()) * t.block_m;
  const double unit_cols = static_cast<double>(t.unit_tiles_n()) * t.block_n;
  std::vector<uint32_t> bands{tallest, static_cast<uint32_t>(std::lround(std::sqrt(resident_units * unit_cols / unit_rows)))};
  for (uint32_t h = 1; h < tallest; h *= 2) bands.push_back(h);
  const double at_default = hbm_bytes_at(kDefaultSwizzle);
  uint32_t best = kDefaultSwizzle;
  double best_bytes = at_default;
  for (uint32_t h : bands) {
    h = std::clamp<uint32_t>(h, 1, tallest);
    // A band at least as tall as the grid walks it as any other such band does.
    if (std::min(h, units_m) == std::min(kDefaultSwizzle, units_m)) continue;
    const double bytes = hbm_bytes_at(h);
    if (bytes < best_bytes) {
      best = h;
      best_bytes = bytes;
    }
  }
  return best_bytes < at_default * (1 - kBandMinSaving) ? best : kDefaultSwizzle;
}

// The problem the kernel walks: with swapped operands N runs along the tiles' rows.
GemmProblem swapped_if(const GemmProblem& p, bool swap) {
  GemmProblem q = p;
  if (swap) std::swap(q.m, q.n);
  return q;
}

// Clusters of 4 leave SMs that cannot hold one (12 of the H200's 132): the companion launch puts
// clusters of 2 there, along the longer side of main's cluster, claiming units of main's cluster
// shape from the same counter. None where no pair of SMs is left. Only where the caller asks for
// it (GemmConfig::companion = 1): auto does not weigh it. Played by the simulator (both launches
// claiming, the cluster free first next) and charged kDynamicUnitsUs, the companion's plans in 2x2
// ran as their terms say against their static twins on aligned rows (4096x4096x7168, 8192^3,
// 4096x24576x1536 with 128x256 tiles: 0.85, 0.89 and 0.93 of the static time, the terms 0.81,
// 0.89, 0.93), where a 1x1 or 2x1 plan on all 132 SMs is as fast, but not on rows that start off a
// line: 4095x7167x4104 and 4097^3 with 128x256 tiles ran 2-4% slower than static where the terms
// put them 12% and 16% ahead (the companion then on a side stream), 128x176 and 128x192 4-5%
// faster where they put them 16% and 13% ahead.
// Neither the per-SM L2 line term nor the whole grid's lines at L2's rate account for it (the grid's
// is below the ingress term on all of those rows); bench/results/2026-12-03-h200-companion.md.
std::optional<KernelLaunch> companion_launch(GemmPlan& plan, const DeviceFacts& f) {
  const ClusterShape cs = plan.main.kernel.cluster;
  const uint32_t used = plan.main.clusters * cs.size();
  const uint32_t idle = plan.sm_budget > used ? plan.sm_budget - used : 0;
  const ClusterShape pair = cs.m >= 2 ? ClusterShape{2, 1} : ClusterShape{1, 2};
  const uint32_t pairs = std::min(idle / pair.size(), f.clusters_for(pair.size()));
  if (cs.size() != 4 || pairs == 0) return std::nullopt;
  KernelLaunch companion{plan.main.kernel, pairs};
  companion.kernel.cluster = pair;
  plan.schedule.unit_m = cs.m;
  plan.schedule.unit_n = cs.n;
  return companion;
}

// The plan of one candidate, or nullopt with `misfit` saying why it cannot run. `surrogate` is
// what the cost model plays: d's problem itself, or for grouped problems the host-side stand-in
// of grouped_surrogate.hpp (swapped for a swap_ab candidate).

// Where a split plan's slices are summed.
enum class SliceSum { kReduceKernel, kFused, kCluster };

std::optional<GemmPlan> evaluate(const GemmDesc& d, const GemmProblem& unswapped_surrogate, const DeviceFacts& f,
                                 const GemmConfig& o, uint32_t bm, uint32_t bn, const ClusterShape& cs,
                                 uint32_t splits, bool swap, SliceSum sum, std::string& misfit) {
  const bool fused = splits > 1 && sum == SliceSum::kFused;
  const bool cluster_sum = splits > 1 && sum == SliceSum::kCluster;
  const GemmProblem unsplit_surrogate = swapped_if(unswapped_surrogate, swap);
  GemmKernelSpec k;
  k.block_m = bm;
  k.block_n = bn;
  k.cluster = cs;
  k.split_columns = o.split_columns == 1;
  k.pingpong = o.pingpong == 1;
  k.consumer_warpgroups = k.split_columns ? kColumnSplitWarpgroups
                          : k.pingpong    ? kPingpongWarpgroups
                                          : bm / kWgmmaAtomRows;
  k.out = d.out;
  k.has_c = d.has_c;
  k.has_bias = d.has_bias;
  k.bias_type = d.bias_type;
  k.type = d.problem.type;
  k.layout = d.layout;
  if (k.type == GemmType::kMGroupedContiguous) k.contiguous_layout = d.problem.contiguous_layout;
  // With the companion asked for, a cluster of 4 runs the dynamic-unit kernel (companion_launch).
  k.dynamic_units = o.companion == 1 && cs.size() == 4;
  k.swap_ab = swap;
  GemmProblem surrogate = unsplit_surrogate;
  if (splits > 1) {
    // The GEMM stores FP32 partial sums into the workspace; the reduce kernel applies the rest,
    // or (fused) the tile's last slice does, or (cluster) each slice sums a band of the tile from
    // its cluster's shared memories, with the problem's epilogue.
    k.split_k = true;
    k.fused_reduce = fused;
    k.k_cluster = cluster_sum ? splits : 1;
    if (!fused && !cluster_sum) {
      k.out = DType::kFP32;
      k.has_c = k.has_bias = false;
      k.bias_type = DType::kFP32;
    }
    k.dynamic_units = false;
    surrogate.k_splits = splits;
  }
  // SM90's shared-memory layout sizes the ring on every arch: SM100 has the same 227 KB per CTA,
  // and until an SM100 kernel exists its stage count is this stand-in.
  k.stages = o.stages ? o.stages : ring_stages(k, f);
  if (const char* why = k.stages ? gemm_geometry_error(k) : "not even two stages fit in shared memory") {
    misfit = "block " + std::to_string(bm) + "x" + std::to_string(bn) + " with " + std::to_string(k.stages) +
             " stages: " + why;
    return std::nullopt;
  }
  if (const uint64_t counters = fused ? split_counters(d.problem, k) : 0; counters > kSplitCounterSlots) {
    misfit = "block " + std::to_string(bm) + "x" + std::to_string(bn) + ": a fused reduce of " +
             std::to_string(counters) + " tile counters, more than the workspace's " +
             std::to_string(kSplitCounterSlots);
    return std::nullopt;
  }
  GemmPlan plan;
  plan.desc = d;
  plan.arch = f.arch;
  plan.main.kernel = k;
  plan.schedule = schedule_of(k, o);
  plan.schedule.k_cluster = k.k_cluster;
  plan.sm_budget = sm_budget(f, o);
  plan.k_splits = splits;
  plan.desc.problem.k_splits = splits;

  // Size the grid as a persistent launch: as many clusters as fit, but never more than the most
  // units any group data of these sizes can give (grouped_surrogate.hpp; exact for dense shapes).
  const uint64_t units = std::max<uint64_t>(max_units(plan.kernel_problem(), plan.schedule), 1);
  if (units > UINT32_MAX) {
    misfit = "the problem has more than 2^32 units of work for block " + std::to_string(bm) + "x" + std::to_string(bn);
    return std::nullopt;
  }
  const uint32_t launch_cluster = cs.size() * k.k_cluster;
  plan.main.clusters = static_cast<uint32_t>(std::min<uint64_t>(f.clusters_for(launch_cluster, plan.sm_budget), units));
  if (plan.main.clusters == 0) {
    misfit = "cluster " + std::to_string(cs.m) + "x" + std::to_string(cs.n) +
             (k.k_cluster > 1 ? " x " + std::to_string(k.k_cluster) + " slices" : std::string()) + " does not fit in " +
             std::to_string(plan.sm_budget) + " SMs";
    return std::nullopt;
  }
  if (cluster_sum && o.cluster_reduce != 1 && (units > plan.main.clusters || k.stages < kClusterReduceMinStages)) {
    misfit = "split-K in clusters of " + std::to_string(splits) + ": " + std::to_string(units) + " tiles, " +
             std::to_string(plan.main.clusters) + " resident clusters, " + std::to_string(k.stages) +
             " stages (auto weighs one wave of at least " + std::to_string(kClusterReduceMinStages) + " stages only)";
    return std::nullopt;
  }
  if (k.dynamic_units) {
    plan.companion = companion_launch(plan, f);
    if (!plan.companion) plan.main.kernel.dynamic_units = false;  // no SM idle: the static kernel
  }
  SimOptions fast;
  fast.check = false;
  // The simulator walks clusters of cluster.m x cluster.n: a cluster-summed plan is played as the
  // split walk of the same CTAs, which gives every CTA the same k-steps (one slice of a tile each,
  // while the tiles last). With a companion both launches claim from one counter, the cluster
  // that is free first claiming next.
  TileConfig played_schedule = plan.schedule;
  played_schedule.k_cluster = 1;
  std::vector<LaunchSpec> launches{{played_schedule, plan.main.clusters * k.k_cluster}};
  double cluster_rate = launches.front().num_clusters;  // units a round, for the waves column
  if (plan.companion) {
    fast.mode = ClaimMode::kDynamic;
    TileConfig side = played_schedule;
    side.cluster = plan.companion->kernel.cluster;
    launches.push_back({side, plan.companion->clusters});
    cluster_rate += static_cast<double>(plan.companion->clusters) * side.cluster.size() / cs.size();
  }
  const SimResult sim = simulate(surrogate, launches, fast);

  CostEstimate& c = plan.cost;
  const double k_step_s = k_step_seconds(k, f);
  c.mma_us = static_cast<double>(sim.stats.makespan_k_steps) * k_step_s * 1e6;
  if (cs.n > cs.m && !k.split_columns) c.mma_us *= kAlongNSlowdown;
  c.l2_to_sm_bytes = sim.stats.l2_to_sm_bytes;
  c.l2_to_sm_bytes_unicast = sim.stats.l2_to_sm_bytes_unicast;
  // The busiest CTA's k-step: where A's box stops at M (a_box_stops_at_m) a problem of fewer rows
  // than a tile loads only those (65x4104x7168: 128x64 tiles in 2 slices 29.6 us against 64x128's
  // 31.9, bench/results/2026-12-02-h200-box-rows.md).
  const uint32_t a_rows = a_box_stops_at_m(k) ? std::min(bm, plan.kernel_problem().m) : bm;
  const double step_bytes = (static_cast<double>(a_rows) + bn) * kGemmBlockK * 2;
  const double sm_ingress_bps = f.l2_tb_per_s * 1e12 / f.num_sms;
  c.ingress_us = static_cast<double>(sim.stats.makespan_k_steps) * step_bytes / sm_ingress_bps * 1e6;
  const uint8_t a_align = box_row_alignment(d, true, swap);
  const uint8_t b_align = box_row_alignment(d, false, swap);
  const double a_read = static_cast<double>(sim.stats.l2_a_bytes);
  const double a_line_bytes = a_read * lines_per_box_row(a_align);
  const double b_line_bytes = (static_cast<double>(c.l2_to_sm_bytes) - a_read) * lines_per_box_row(b_align);
  c.l2_line_bytes = a_line_bytes + b_line_bytes;
  // L2 lookups per SM: the busiest CTA's own requests, in lines (its share of every k-step's reads,
  // each multicast once, times its k-steps), at the same share of 10 TB/s as its ingress. A
  // multicast box is requested by one CTA and delivered to all, so this term falls with multicast
  // where ingress does not; with rows on a line it never exceeds ingress, with rows off one it
  // is up to 1.875 times the unicast ingress. Taken per SM, not over the whole grid: 4097^3 ran
  // 128x256 in 2x1 (4.4 waves) in 255 us with 256-byte promotion, as its busiest CTA's lines at
  // that rate say (the whole grid's lines at 10 TB/s say 214).
  const double line_cost_bytes =
      a_line_bytes * line_cost(a_align, d.problem.type) + b_line_bytes * line_cost(b_align, d.problem.type);
  const double line_bytes_per_k_step =
      line_cost_bytes / std::max<double>(1.0, static_cast<double>(sim.stats.tile_k_steps));
  c.l2_us = static_cast<double>(sim.stats.makespan_k_steps) * line_bytes_per_k_step / sm_ingress_bps * 1e6;
  const double hbm_bps = f.hbm_tb_per_s * 1e12;
  const double operand_bps = hbm_bps * kOperandStreamHbmFraction;
  const double operands = operand_bytes(unsplit_surrogate);
  // The busiest CTA's k-steps whose stage waits on HBM (the share of all operand bytes that come
  // from HBM), each at the larger of its bytes at one SM's stream rate and a turn of its ring
  // (k.stages >= 1: a plan with none was refused above).
  const double first_touch = std::min(1.0, hbm_bytes(unsplit_surrogate, d.out, false) /
                                               std::max<double>(1.0, static_cast<double>(c.l2_to_sm_bytes_unicast)));
  const double stream_step_us =
      first_touch * std::max(step_bytes / kSmHbmStreamBytesPerS * 1e6, kHbmRingTurnUs / k.stages);
  c.stream_us = static_cast<double>(sim.stats.makespan_k_steps) * stream_step_us;
  if (splits == 1) {
    c.hbm_us = (operands / operand_bps + (hbm_bytes(surrogate, d.out, d.has_c) - operands) / hbm_bps) * 1e6;
  } else {
    // The workspace is written by the GEMM and read back by the reduce kernel, at L2's rate
    // where it fits there; A and B move once, C and D once in the reduce kernel.
    const double ws = static_cast<double>(plan.workspace_bytes());
    const double ws_bps = ws <= kWorkspaceL2Fraction * static_cast<double>(f.l2_bytes) ? f.l2_tb_per_s * 1e12 : hbm_bps;
    const double d_bytes = static_cast<double>(d.problem.num_groups) * d.problem.m * d.problem.n * dtype_bytes(d.out);
    c.hbm_us = (operands / operand_bps + ws / ws_bps) * 1e6;
    // Either way D (and C) move once. The fused reduce: the busiest tile's last warpgroups read its
    // k_splits partials, each through its own SM; the reduce kernel: the whole workspace. Summed
    // across the cluster, no workspace: each CTA reads one tile's worth of partials.
    const double d_s = d_bytes * (d.has_c ? 2 : 1) / hbm_bps;
    const double tile_partials = static_cast<double>(splits) * bm * bn * sizeof(float);
    if (cluster_sum) {
      c.hbm_us = operands / operand_bps * 1e6;
      c.reduce_us = kClusterReduceLatencyUs + (tile_partials / splits / sm_ingress_bps + d_s) * 1e6;
    } else {
      c.reduce_us = fused ? kFusedReduceLatencyUs + (tile_partials / sm_ingress_bps + d_s) * 1e6
                          : kReduceLaunchUs + (ws / ws_bps + d_s) * 1e6;
    }
  }
  if (swap) {
    // D (or the FP32 workspace) leaves in element stores, not TMA stores.
    const double stored = static_cast<double>(d.problem.num_groups) * d.problem.m * d.problem.n *
                          (splits > 1 ? splits * sizeof(float) : dtype_bytes(d.out));
    c.swapped_store_us = stored / (hbm_bps * kSwappedStoreEfficiency) * 1e6;
  }
  const double linear_4 = cs.size() == 4 && (cs.m == 1 || cs.n == 1) ? kLinearClusterOf4Slowdown : 1.0;
  const double heavy_wide =
      splits == 1 && !swap && bn >= kHeavyEpilogueWideFrom && heavy_epilogue(d) ? kHeavyEpilogueWideSlowdown : 1.0;
  const double on_chip_us = std::max({c.mma_us, c.ingress_us, c.l2_us, c.stream_us});
  const double bound_us = std::pow(std::pow(on_chip_us, kHbmOverlapPower) + std::pow(c.hbm_us, kHbmOverlapPower),
                                   1.0 / kHbmOverlapPower);
  c.dynamic_units_us = plan.companion ? kDynamicUnitsUs : 0.0;
  c.total_us = bound_us * linear_4 * heavy_wide + c.reduce_us + c.swapped_store_us + c.dynamic_units_us;
  c.waves = static_cast<double>(std::max<uint64_t>(sim.stats.units, 1)) / cluster_rate;
  return plan;
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

uint8_t row_alignment(uint64_t base, uint64_t row_stride_bytes, uint64_t batch_stride_bytes) {
  uint64_t a = kL2LineBytes;
  for (uint64_t v : {base, row_stride_bytes, batch_stride_bytes})
    while (a > 1 && v % a != 0) a /= 2;
  return static_cast<uint8_t>(a);
}

uint8_t box_row_alignment(const GemmDesc& d, bool kernel_a, bool swap) {
  const uint8_t rows = kernel_a != swap ? d.a_row_alignment : d.b_row_alignment;
  return d.problem.type == GemmType::kKGroupedContiguous ? std::min(rows, kKGroupStartAlignment) : rows;
}

void assume_padded_rows(GemmDesc& d, uint32_t row_bytes) {
  const GemmProblem& p = d.problem;
  constexpr uint64_t kTmaStrideBytes = 16, kBF16Bytes = 2;
  const uint64_t pad = std::max<uint64_t>(row_bytes, kTmaStrideBytes);
  const auto padded = [pad](uint64_t elements) { return row_alignment(0, (elements * kBF16Bytes + pad - 1) / pad * pad, 0); };
  // A stored row runs along K, or along M (N) where the layout stores A (B) MN-major.
  d.a_row_alignment = padded(a_mn_major(d.layout) ? p.m : p.k);
  d.b_row_alignment = padded(b_mn_major(d.layout) ? p.n : p.k);
}

GemmDesc dense_desc(int64_t m, int64_t n, int64_t k, int64_t batch, DType out, bool has_c, GemmLayout layout) {
  GemmDesc d;
  d.layout = layout;
  d.problem.type = batch > 1 ? GemmType::kBatched : GemmType::kNormal;
  d.problem.m = static_cast<uint32_t>(m);
  d.problem.n = static_cast<uint32_t>(n);
  d.problem.k = static_cast<uint32_t>(k);
  d.problem.num_groups = static_cast<uint32_t>(batch);
  d.out = out;
  d.has_c = has_c;
  return d;
}

GemmDesc mgrouped_contiguous_desc(ContiguousLayout layout, int64_t rows, int64_t n, int64_t k, int64_t experts,
                                  DType out) {
  GemmDesc d = dense_desc(rows, n, k, 1, out, false);
  d.problem.type = GemmType::kMGroupedContiguous;
  d.problem.contiguous_layout = layout;
  d.problem.num_groups = static_cast<uint32_t>(experts);
  return d;
}

GemmDesc mgrouped_masked_desc(int64_t max_m, int64_t n, int64_t k, int64_t experts, int64_t expected_m, DType out) {
  GemmDesc d = dense_desc(max_m, n, k, experts, out, false);
  d.problem.type = GemmType::kMGroupedMasked;
  d.expected_m = static_cast<uint32_t>(expected_m);
  return d;
}

GemmDesc kgrouped_desc(int64_t m, int64_t n, int64_t k, int64_t groups, DType out, bool accumulate) {
  GemmDesc d = dense_desc(m, n, k, groups, out, accumulate);
  d.problem.type = GemmType::kKGroupedContiguous;
  return d;
}

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
                                std::pair{"companion", o.companion}})
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
  if (o.max_sms && o.cluster_m && o.max_sms < o.cluster_m * o.cluster_n)
    fail("max_sms " + std::to_string(o.max_sms) + " cannot hold one cluster of " +
         std::to_string(o.cluster_m * o.cluster_n));
}

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
  std::string misfit;  // why the last candidate that could not run could not
  std::string first_misfit;  // the same, for the first split count (1 unless forced)
  bool first_fits = false;
  // A swapped tile is 128 rows over N and M rounded up to a multiple of 8 wide (or as given).
  const std::vector<uint32_t> swap_bms{kSwapBlockM};
  const std::vector<uint32_t> swap_bns{o.block_n ? o.block_n : std::min(kSwapMaxM, (p.m + 7) / 8 * 8)};
  // Where split slices are summed: by the reduce kernel, or in the GEMM where the caller asks
  // (kFusedReduceLatencyUs says why auto does not).
  const SliceSum sum = cluster_sum ? SliceSum::kCluster : o.fused_reduce == 1 ? SliceSum::kFused : SliceSum::kReduceKernel;
  // Auto also weighs the splits of 2, 4 and 8 summed across a cluster, with 1x1 clusters of tiles,
  // where one wave of clusters holds every tile (kClusterReduceLatencyUs says why).
  const bool auto_cluster_sum = arch.runs_kernels && o.cluster_reduce == -1 && o.fused_reduce != 1 && !swap &&
                                splits.size() > 1 && (!o.cluster_m || (o.cluster_m == 1 && o.cluster_n == 1));
  // Every tile and cluster shape of `shapes` for split `s`, summed by `how`; why the last misfit
  // could not run goes into `why`.
  // No unswapped tile wider than the problem, unless asked for (the narrowest is always weighed).
  const auto wider_than_problem = [&](uint32_t bn) {
    return !o.block_n && bn > (p.n + 15) / 16 * 16 && bn > arch.block_ns.front();
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
          if (arch.cluster_divides_shape && !cluster_divides(p, bm, bn, cs)) {
            why = "cluster " + std::to_string(cs.m) + "x" + std::to_string(cs.n) + " does not divide the " +
                  std::to_string(ceil_div(p.m, bm)) + "x" + std::to_string(ceil_div(p.n, bn)) + " blocks of " +
                  std::to_string(bm) + "x" + std::to_string(bn) + " (" + arch.name + ": no partial cluster)";
            continue;
          }
          if (std::optional<GemmPlan> plan = evaluate(d, played, f, o, bm, bn, cs, s, swap, how, why))
            out.push_back(std::move(*plan));
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
  if (o.swizzle == 0) out.front().schedule.swizzle = band_height(out.front(), f);
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

std::string GemmPlan::describe() const {
  const GemmKernelSpec& k = main.kernel;
  std::ostringstream s;
  const ArchSpec& a = arch_spec(arch);
  if (arch != Arch::kSM90) s << a.name << " ";
  if (k.layout != GemmLayout::kNT) s << layout_name(k.layout) << " ";
  s << k.block_m << "x" << k.block_n << "x" << kGemmBlockK << " stages " << k.stages << " cluster " << k.cluster.m
    << "x" << k.cluster.n << " mc " << (schedule.multicast_a ? "A" : "-") << (schedule.multicast_b ? "B" : "-")
    << " clusters " << main.clusters;
  if (a.mma_cta_group > 1 && k.cluster.m % a.mma_cta_group == 0)
    s << " (" << a.mma_cta_group << "-CTA MMA, M " << a.mma_cta_group * k.block_m << ")";
  if (companion) s << " + " << companion->clusters << "x(" << companion->kernel.cluster.m << "x" << companion->kernel.cluster.n << ")";
  if (k_splits > 1) s << " split-K " << k_splits << (k.fused_reduce ? " fused" : k.k_cluster > 1 ? " in cluster" : "");
  if (k.swap_ab) s << " swap-AB";
  if (k.split_columns) s << " split-columns";
  if (k.pingpong) s << " ping-pong";
  if (schedule.swizzle != kDefaultSwizzle) s << " band " << schedule.swizzle;
  char est[64];
  std::snprintf(est, sizeof est, " est %.1f us", cost.total_us);
  s << est;
  return s.str();
}

std::string format_plans(const std::vector<GemmPlan>& ranked, size_t alternatives) {
  std::ostringstream s;
  if (ranked.empty()) return "no plan\n";
  s << "chosen: " << ranked.front().describe() << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%4s %-9s %6s %7s %3s %6s %9s %5s %6s %9s %8s %10s %8s %8s %9s %9s %10s %10s\n",
                "rank", "tile", "stages", "cluster", "mc", "splits", "clusters", "SMs", "waves", "est us", "mma us",
                "ingress us", "L2 us", "HBM us", "stream us", "reduce us", "L2->SM MB", "unicast MB");
  s << line;
  for (size_t i = 0; i < ranked.size() && i <= alternatives; ++i) {
    const GemmPlan& p = ranked[i];
    const GemmKernelSpec& k = p.main.kernel;
    char tile[16], cluster[24];
    std::snprintf(tile, sizeof tile, "%ux%u%s", k.block_m, k.block_n, k.swap_ab ? "/sw" : k.fused_reduce ? "/f" : k.k_cluster > 1 ? "/kc" : "");
    std::snprintf(cluster, sizeof cluster, "%ux%u%s", k.cluster.m, k.cluster.n, p.companion ? "+c" : "");
    const uint32_t sms = p.main.clusters * k.cluster.size() * k.k_cluster +
                         (p.companion ? p.companion->clusters * p.companion->kernel.cluster.size() : 0);
    std::snprintf(line, sizeof line,
                  "%4zu %-9s %6u %7s %1s%1s  %6u %9u %5u %6.2f %9.1f %8.1f %10.1f %8.1f %8.1f %9.1f %9.1f %10.1f %10.1f\n",
                  i + 1, tile, k.stages, cluster, p.schedule.multicast_a ? "A" : "-", p.schedule.multicast_b ? "B" : "-",
                  p.k_splits, p.main.clusters, sms, p.cost.waves, p.cost.total_us, p.cost.mma_us, p.cost.ingress_us, p.cost.l2_us,
                  p.cost.hbm_us, p.cost.stream_us, p.cost.reduce_us, p.cost.l2_to_sm_bytes / 1e6,
                  p.cost.l2_to_sm_bytes_unicast / 1e6);
    s << line;
  }
  if (ranked.size() > alternatives + 1) s << "(" << ranked.size() - alternatives - 1 << " more)\n";
  return s.str();
}

}  // namespace tilecast::plan
