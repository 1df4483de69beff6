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
// Every rate is the device's (device_facts.hpp), every tile and cluster the arch spec's
// (arch_spec.hpp).
#include "planner.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tilecast/plan/grouped_surrogate.hpp"
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

// What the companion launch costs beyond the static kernel where both run the same rounds: the
// dynamic-unit kernels claim each unit from a global counter (an atomic round trip before the
// first load of each unit) and count themselves done, and the companion's grid waits for the
// main one before it exits. Measured on the H200 as the time a 2x2, 4x1 or 1x4 plan with the
// companion took over its static twin where the clusters of 4 held every unit at once (the
// companion had nothing to do): 1000^3 with 128x96 tiles +2.4, +1.9 and +2.3 us, 128x7168x2048
// with 128x64 in 1x4 +2.3 us; with the companion on a side stream forked and joined by events
// before, 2.2-2.5 us on the same rows (bench/results/2026-12-03-h200-companion.md).
constexpr double kDynamicUnitsUs = 2.3;

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

// The reduce kernel's fixed cost: its launch behind the GEMM on the same stream and its one short
// wave (about 2 us between dependent launches on the H200, plus the ramp of a memory-bound
// kernel): a stated figure. Measured against the same tile and split summed in the cluster (24
// pairs in the sweeps of bench/results/2026-12-02-h200-operand-stream.md), the reduce kernel's
// plans ran 0.8-3.9 us slower (median 2.4) where the terms say 0.5-1.5 (median 1.0): about 1.7 us
// more than this. At 4.7 the tie order then takes plans measured slower (128x4096x7168 64x64
// unsplit, +11%; 333x2112x7168 128x96 summed in clusters of 2, +8.6%), so it stays stated until
// the tie order is revisited with it.
constexpr double kReduceLaunchUs = 3.0;

// A workspace up to this fraction of L2 is written and read back there, not through HBM.
constexpr double kWorkspaceL2Fraction = 0.5;
// The fused reduce (GemmKernelSpec::fused_reduce) is weighed only where the caller asks for it
// (fused_reduce=1): on the H200 it ran 5-26% slower than the reduce kernel on every split row but
// one, which it tied (64x4096x7168; bench/results/2026-12-02-h200-producer.md), so auto never fuses.
// Its terms then rank the fused plans among themselves: the tile's last warpgroup to arrive reads
// the k_splits partial tiles back from L2 at its SM's share of the L2 -> SM rate, after one round
// trip for the counter's atomic and the first loads (a stated figure).
constexpr double kFusedReduceLatencyUs = 1.0;

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
double hbm_bytes(const GemmProblem& p, DType out, bool has_c) {
  double d = 0;
  for (const GroupSize& g : group_sizes(p)) d += static_cast<double>(g.rows) * p.n;
  return operand_bytes(p) + d * dtype_bytes(out) * (has_c ? 2 : 1);
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

}  // namespace

double operand_bytes(const GemmProblem& p) {
  double a = 0, b = 0;
  for (const GroupSize& g : group_sizes(p)) {
    a += static_cast<double>(g.rows) * g.k;
    if (g.rows) b += static_cast<double>(p.n) * g.k;
  }
  return (a + b) * 2;
}

GemmProblem swapped_if(const GemmProblem& p, bool swap) {
  GemmProblem q = p;
  if (swap) std::swap(q.m, q.n);
  return q;
}

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
  k.k_serpentine = o.k_serpentine == 1;
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
  const double first_touch =
      std::min(1.0, operands / std::max<double>(1.0, static_cast<double>(c.l2_to_sm_bytes_unicast)));
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

}  // namespace tilecast::plan
