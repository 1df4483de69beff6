// What one compiled GEMM kernel is: the choices fixed at compile time. The planner fills one in
// on the host, the JIT writes it into a generated traits struct field by field name
// (src/api/gemm_source.cpp), and the kernel reads it back with spec_of<Traits>(). The rules a spec
// must keep are stated once, in gemm_spec_error(): the kernel static_asserts them and the planner
// refuses an override that breaks them.
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/dtype.cuh"
#include "tilecast/device/gemm_layout.cuh"
#include "tilecast/device/kernels/gemm_sm90/operand_tile.cuh"
#include "tilecast/device/ptx/wgmma_widths.cuh"
#include "tilecast/device/scheduler/cluster.cuh"
#include "tilecast/device/scheduler/problem.cuh"

namespace tilecast {

struct GemmKernelSpec {
  uint32_t block_m = 128;            // tile rows: 64 per consumer warpgroup (64, 128 or 192)
  uint32_t block_n = 128;            // tile columns: one of kWgmmaBF16Widths
  uint32_t stages = 4;               // depth of the operand ring
  ClusterShape cluster{};            // CTAs along M x along N
  uint32_t consumer_warpgroups = 2;  // wgmma warpgroups; each takes block_m / consumer_warpgroups rows
  DType out = DType::kBF16;          // D's element type, and C's
  bool has_c = false;                // D = alpha * A * B^T + beta * C, C read by TMA
  bool has_bias = false;             // + bias[column], read by TMA
  DType bias_type = DType::kFP32;    // the bias vector's element type (with has_bias)
  GemmType type = GemmType::kNormal;
  // kMGroupedContiguous: which layout, fixed at compile time (a run-time branch between the two
  // cost the producer of the dynamic-unit 2x2 kernel a spill); kRowIndex (the default) otherwise.
  ContiguousLayout contiguous_layout = ContiguousLayout::kRowIndex;
  bool dynamic_units = false;        // units claimed from a global counter shared with a companion launch
  // Split-K (kNormal, kBatched): GemmProblem::k_splits slices of K, each tile's partial sums
  // stored in FP32 into the workspace D is then (no C, no bias, alpha 1); a reduce kernel sums
  // the slices and applies the epilogue (kernels/split_k_reduce.cuh). Off, k_splits is 1 as a
  // constant, and the scheduler's slice arithmetic folds away.
  bool split_k = false;
  // Split-K reduced inside the GEMM (with split_k; not swapped): each slice's CTA stores its FP32
  // partial tile into the workspace from its registers and counts itself on the tile's counter;
  // the tile's last slice to arrive sums the slices in slice order (the reduce kernel's order, so
  // the same bits) and applies the epilogue itself (epilogue_fused_split.cuh). Such a kernel keeps
  // D's dtype, C and the bias of the problem, and no reduce kernel runs.
  bool fused_reduce = false;
  // Split-K reduced across a cluster (with split_k; k_splits == k_cluster): the k_cluster CTAs of
  // one cluster compute the k_cluster K slices of the same tile, each stores its FP32 partial tile
  // into its own shared memory, and after a cluster-wide handshake each CTA sums one band of the
  // tile over every peer's buffer through distributed shared memory, in slice order (the reduce
  // kernel's order: the same bits), and applies the epilogue (epilogue_cluster_split.cuh). No
  // workspace, no counters, no second kernel; the cluster's CTAs are co-scheduled by the
  // hardware, so the wait for the peers needs no cooperative launch. 1: off. The launch's cluster
  // is cluster.size() * k_cluster CTAs; cluster itself must be 1x1 (no multicast: the slices read
  // different K).
  uint32_t k_cluster = 1;
  // How A and B are stored (gemm_layout.cuh): which operand tiles are MN-major in shared memory
  // and which of wgmma's transpose immediates are set. Dense and batched kernels only.
  GemmLayout layout = GemmLayout::kNT;
  // Swapped operands for small M (issue #12): the kernel computes D^T = B * A^T, so that the
  // problem's large N runs along the tile's rows (block_m, wgmma's M) and its few M rows along the
  // tile's columns (block_n, one of kWgmmaSwapWidths, wgmma's N). The host hands the kernel B's
  // tensor map as A's and A's as B's, and the problem with m and n swapped; the scheduler and the
  // main loop do not know. Only the epilogue does (epilogue_swapped.cuh): accumulator (row r, column
  // c) is D[c][r], stored element by element from registers, C read and the bias indexed the same
  // way. NT only (both operands stay K-major), dense and batched, no companion.
  bool swap_ab = false;
  // Consumer warpgroups split the tile's columns instead of its rows: each computes all block_m
  // rows (block_m / 64 wgmma atoms) of block_n / consumer_warpgroups columns, so a tile may be
  // taller than 64 rows a warpgroup with two warpgroups (192x176: three atoms of n88 each). Larger
  // tiles bring fewer operand bytes into the SM per FLOP; cuBLASLt's kernel on 4104^3 runs such a
  // tile (bench/results/2026-12-03-h200-cublas-tiles-c-prefetch.md). Dense and batched, unsplit,
  // unswapped; only when asked for (GemmConfig::split_columns).
  bool split_columns = false;
  // Ping-pong: the two consumer warpgroups take the CTA's tiles in turn, each a whole tile
  // (block_m / 64 atoms of block_n columns), and run their main loops one after the other, so that
  // each one's epilogue runs under the other's main loop (consumer.cuh). With the tensor pipe
  // otherwise idle during a cooperative tile's epilogue, short-K tiles gain most: 128x128 in turns
  // ran 4096x32768x512 7% faster than cooperative 128x128 and 3% faster than cooperative 128x256
  // (bench/results/2026-12-04-h200-pingpong.md). Dense, batched and k-grouped, unsplit,
  // unswapped, no companion; with C and a bias the epilogue loader follows the turns
  // (epilogue_loader.cuh), and k-grouped k-tails are handed over by the turn's warpgroup (k_tail.cuh).
  bool pingpong = false;
  // Serpentine K: the units of a static launch's odd waves (its (unit / clusters)-th round, odd)
  // walk their K backwards, so that a wave starts on the K columns the wave before it ended on,
  // which L2 still holds: where a wave's rows and columns over all of K overflow L2, forward waves
  // each read their operands from HBM again (8192^3 in 128x256 tiles at band 16 read 1.23 GB
  // forward and 1.09 serpentine on the H200, and ran no faster). Only the producer's K
  // order changes (TileWork::k_step): the sums run in another order, so such tiles' bits differ
  // from forward ones', the same run to run. Static launches (no companion: a claimed unit's wave
  // is not its index's), every type but k-grouped (whose last k-step of a group is cleared:
  // k_tail.cuh), not with fused_reduce (a register edge). Only when asked for
  // (GemmConfig::k_serpentine).
  bool k_serpentine = false;

  TC_HOST_DEVICE constexpr bool operator==(const GemmKernelSpec& o) const {
    return block_m == o.block_m && block_n == o.block_n && stages == o.stages && cluster == o.cluster &&
           consumer_warpgroups == o.consumer_warpgroups && out == o.out && has_c == o.has_c &&
           has_bias == o.has_bias && bias_type == o.bias_type && type == o.type &&
           contiguous_layout == o.contiguous_layout && dynamic_units == o.dynamic_units && split_k == o.split_k &&
           layout == o.layout && swap_ab == o.swap_ab && fused_reduce == o.fused_reduce && k_cluster == o.k_cluster &&
           split_columns == o.split_columns && pingpong == o.pingpong && k_serpentine == o.k_serpentine;
  }
};

// Whether the reduce kernel sums this kernel's split-K slices (it stores FP32 partial sums, summed
// neither in the GEMM nor across a cluster): a second launch behind it (api/call.cpp).
TC_HOST_DEVICE constexpr bool needs_reduce_kernel(const GemmKernelSpec& s) {
  return s.split_k && !s.fused_reduce && s.k_cluster == 1;
}

// Whether the call launches a grid of its own programmatically behind this kernel's (api/call.cpp):
// the reduce kernel, or the companion behind a main grid of dynamic units (and the companion, also
// of dynamic units, says the same). Such a kernel lets its dependents launch once it is set up; the
// others only as their CTAs exit (kernel.cuh).
TC_HOST_DEVICE constexpr bool launches_own_dependent(const GemmKernelSpec& s) {
  return needs_reduce_kernel(s) || s.dynamic_units;
}

// Rows one consumer warpgroup's wgmma atoms cover (m64 each).
inline constexpr uint32_t kWgmmaAtomRows = 64;
// FP32 accumulator registers a consumer thread may hold (block_n / 2 per atom).
inline constexpr uint32_t kMaxAccumulators = 128;
// Deepest operand ring the planner considers.
inline constexpr uint32_t kGemmMaxStages = 8;

TC_HOST_DEVICE constexpr bool is_wgmma_width(uint32_t n) {
  for (uint32_t w : kWgmmaBF16Widths)
    if (w == n) return true;
  return false;
}

// A column-split warpgroup's width: a tile's width, or one only half a tile takes (88 of 176).
TC_HOST_DEVICE constexpr bool is_wgmma_split_width(uint32_t n) {
  for (uint32_t w : kWgmmaSplitWidths)
    if (w == n) return true;
  return is_wgmma_width(n);
}

TC_HOST_DEVICE constexpr bool is_wgmma_swap_width(uint32_t n) {
  for (uint32_t w : kWgmmaSwapWidths)
    if (w == n) return true;
  return false;
}

// The swapped kernel's tile rows: two consumer warpgroups over 128 of the problem's N, the
// wgmma's M side, fed at full rate (one warpgroup runs at about half: plan_cost.cpp).
inline constexpr uint32_t kSwapBlockM = 128;
// The widest swapped tile: the problem's M is at most this (the widest of kWgmmaSwapWidths).
inline constexpr uint32_t kSwapMaxM = 64;
// Tiles of 192 rows: three consumer warpgroups of 64, for problems a little over 128 rows (129:
// one tile where 128-row tiles take two, the second for one row). Four warpgroups of 128 threads
// leave each consumer 152 registers (geometry.cuh), so the tile is at most 192 wide (96
// accumulators a thread).
inline constexpr uint32_t kThreeWarpgroupBlockM = 192;
inline constexpr uint32_t kThreeWarpgroupMaxBlockN = 192;
// The widest tile a fused split-K reduce takes: its sum holds a slice's loads beside the
// accumulators, and wider tiles spilled (sm_90a, nvcc 13.0: 80 bytes at 64x192 and 128x176,
// 344-1380 at 128x192 and 128x256); the planner's split plans are 64 to 144 wide.
inline constexpr uint32_t kFusedReduceMaxBlockN = 144;

// Why a cluster-reduced split-K spec (k_cluster > 1) cannot be built, or null.
TC_HOST_DEVICE constexpr const char* k_cluster_error(const GemmKernelSpec& s) {
  if (s.k_cluster == 0 || s.k_cluster > kMaxClusterSize) return "k_cluster must be 1..8 (the portable cluster size)";
  if (s.k_cluster == 1) return nullptr;
  if (!s.split_k) return "k_cluster reduces split-K slices across a cluster: it needs split_k";
  if (s.fused_reduce) return "k_cluster and fused_reduce are two ways to sum the slices: pick one";
  if (s.swap_ab) return "k_cluster is for unswapped kernels (swap_ab stores its own way)";
  if (s.cluster.size() != 1) return "a k_cluster kernel's cluster is its slices: cluster must be 1x1 (no multicast)";
  return nullptr;
}

TC_HOST_DEVICE constexpr bool is_cluster_shape(const ClusterShape& c) {
  for (const ClusterShape& s : kClusterShapes)
    if (s == c) return true;
  return false;
}

// The TMA's longest box side, in elements: a K-major operand tile is one box of block_m or block_n rows.
inline constexpr uint32_t kMaxTmaBoxRows = 256;
// A column-split tile's rows: two to four atoms (A's box is at most kMaxTmaBoxRows rows).
inline constexpr uint32_t kColumnSplitMinBlockM = 128;
inline constexpr uint32_t kColumnSplitMaxBlockM = 256;
// A column-split tile's consumer warpgroups: two halves of its columns.
inline constexpr uint32_t kColumnSplitWarpgroups = 2;
// Its clusters hold at most this many CTAs along M (register edges: split_columns_error).
inline constexpr uint32_t kColumnSplitMaxClusterM = 2;
// A column-split consumer holds up to this many accumulators (192x192: 3 atoms x 96 / 2) in the
// 224 registers two consumer warpgroups get (geometry.cuh).
inline constexpr uint32_t kColumnSplitMaxAccumulators = 144;

// Why a column-split spec (split_columns) cannot be built, or null.
TC_HOST_DEVICE constexpr const char* split_columns_error(const GemmKernelSpec& s) {
  if (s.block_m < kColumnSplitMinBlockM || s.block_m > kColumnSplitMaxBlockM || s.block_m % kWgmmaAtomRows != 0)
    return "a column-split tile is 128, 192 or 256 rows";
  if (s.consumer_warpgroups != kColumnSplitWarpgroups) return "a column-split tile has two consumer warpgroups";
  if (s.block_n > kMaxTmaBoxRows || s.block_n % s.consumer_warpgroups != 0 ||
      !is_wgmma_split_width(s.block_n / s.consumer_warpgroups))
    return "a column-split tile's block_n is at most 256, and half of it a wgmma width (kWgmmaBF16Widths, kWgmmaSplitWidths)";
  if (s.block_m / kWgmmaAtomRows * (s.block_n / s.consumer_warpgroups) / 2 > kColumnSplitMaxAccumulators)
    return "more accumulators than a column-split consumer holds (block_m / 64 x block_n / 4 > 144)";
  if (s.type != GemmType::kNormal && s.type != GemmType::kBatched) return "split_columns is for dense and batched GEMMs only";
  // Register edges (sm_90a, nvcc 13.0): with FP32 C and a batch ptxas spilled 8 bytes in 4x1
  // clusters, and with C and a bias 4 bytes at 192x176 in 2x2.
  if (s.cluster.m > kColumnSplitMaxClusterM) return "a column-split tile's cluster is at most 2 CTAs along M";
  if (s.has_c && s.has_bias) return "a column-split tile takes C or a bias, not both";
  if (s.split_k || s.swap_ab) return "split_columns is for unsplit, unswapped kernels";
  if (operand_tile_error(b_mn_major(s.layout), s.block_n / s.consumer_warpgroups) != nullptr)
    return "B is N-major (layout NN or TN): a column-split warpgroup's columns are a multiple of 64";
  return nullptr;
}

// A ping-pong kernel's consumer warpgroups: two, taking turns.
inline constexpr uint32_t kPingpongWarpgroups = 2;

// Why a ping-pong spec cannot be built, or null.
TC_HOST_DEVICE constexpr const char* pingpong_error(const GemmKernelSpec& s) {
  if (s.block_m != 64 && s.block_m != 128) return "a ping-pong tile is 64 or 128 rows (one warpgroup's atoms)";
  if (s.consumer_warpgroups != kPingpongWarpgroups) return "a ping-pong kernel has two consumer warpgroups";
  if (!is_wgmma_width(s.block_n)) return "block_n must be one of the wgmma widths (kWgmmaBF16Widths)";
  if (s.block_m / kWgmmaAtomRows * s.block_n / 2 > kMaxAccumulators)
    return "more accumulators than a consumer thread can hold (a ping-pong warpgroup holds the whole tile: "
           "block_m / 64 x block_n / 2 > 128)";
  if (s.type != GemmType::kNormal && s.type != GemmType::kBatched && s.type != GemmType::kKGroupedContiguous)
    return "pingpong is for dense, batched and k-grouped GEMMs only";
  if (s.split_k || s.swap_ab || s.split_columns) return "pingpong is for unsplit, unswapped kernels without split columns";
  if (s.dynamic_units) return "pingpong runs without a companion launch";
  return nullptr;
}

// Why a swapped-operand spec (swap_ab) cannot be built, or null.
TC_HOST_DEVICE constexpr const char* swap_ab_error(const GemmKernelSpec& s) {
  if (s.block_m != kSwapBlockM) return "a swap_ab kernel's tiles are 128 rows over N (block_m 128)";
  if (!is_wgmma_swap_width(s.block_n)) return "a swap_ab kernel's block_n is one of kWgmmaSwapWidths (8, 16, .., 64)";
  if (s.layout != GemmLayout::kNT) return "swap_ab is NT only (A and B K-major)";
  if (s.type != GemmType::kNormal && s.type != GemmType::kBatched) return "swap_ab is for dense and batched GEMMs only";
  if (s.dynamic_units) return "swap_ab runs without a companion launch";
  return nullptr;
}

// Why the kernel cannot be built for `s`, or null when it can. (Shared-memory fit is the
// geometry's to check: gemm_geometry_error in geometry.cuh.)
TC_HOST_DEVICE constexpr const char* gemm_spec_error(const GemmKernelSpec& s) {
  if (s.pingpong) {
    if (const char* e = pingpong_error(s)) return e;
  } else if (s.split_columns) {
    if (const char* e = split_columns_error(s)) return e;
  } else if (s.block_m != 64 && s.block_m != 128 && s.block_m != kThreeWarpgroupBlockM) {
    return "block_m must be 64, 128 or 192";
  }
  if (s.block_m == kThreeWarpgroupBlockM && !s.split_columns) {
    if (s.type != GemmType::kNormal && s.type != GemmType::kBatched)
      return "192-row tiles are for dense and batched GEMMs only";
    if (s.block_n > kThreeWarpgroupMaxBlockN)
      return "a 192-row tile is at most 192 wide (its consumers hold 152 registers)";
  }
  if (s.swap_ab) {
    if (const char* e = swap_ab_error(s)) return e;
  } else if (!s.split_columns && !s.pingpong) {
    if (!is_wgmma_width(s.block_n)) return "block_n must be one of the wgmma widths (kWgmmaBF16Widths)";
    if (s.consumer_warpgroups == 0 || s.block_m % s.consumer_warpgroups != 0 ||
        (s.block_m / s.consumer_warpgroups) % kWgmmaAtomRows != 0)
      return "each consumer warpgroup takes a multiple of 64 rows";
    if (s.block_m / s.consumer_warpgroups / kWgmmaAtomRows * s.block_n / 2 > kMaxAccumulators)
      return "more accumulators than a consumer thread can hold (rows per warpgroup x block_n / 128 > 128)";
  }
  if (!is_cluster_shape(s.cluster)) return "cluster must be 1x1, 2x1, 1x2, 4x1, 1x4 or 2x2";
  if (s.stages < 2 || s.stages > kGemmMaxStages) return "stages must be 2..8";
  if (s.out != DType::kBF16 && s.out != DType::kFP32) return "the output is bf16 or fp32";
  if (s.has_bias && s.bias_type != DType::kBF16 && s.bias_type != DType::kFP32) return "the bias is bf16 or fp32";
  if (static_cast<uint32_t>(s.type) > static_cast<uint32_t>(GemmType::kKGroupedContiguous)) return "unknown gemm type";
  if ((s.has_c || s.has_bias) && (s.type == GemmType::kMGroupedContiguous || s.type == GemmType::kMGroupedMasked))
    return "m-grouped GEMMs take no C and no bias";
  if (s.contiguous_layout != ContiguousLayout::kRowIndex &&
      (s.type != GemmType::kMGroupedContiguous || s.contiguous_layout != ContiguousLayout::kOffsets))
    return "only m-grouped contiguous kernels take the offsets layout";
  if (!is_gemm_layout(s.layout)) return "layout must be NT, NN, TN or TT";
  if (s.layout != GemmLayout::kNT && s.type != GemmType::kNormal && s.type != GemmType::kBatched)
    return "grouped GEMMs are NT only (A and B K-major)";
  if (operand_tile_error(b_mn_major(s.layout), s.block_n) != nullptr)
    return "B is N-major (layout NN or TN): block_n must be a multiple of 64 (64, 128, 192, 256)";
  if (s.split_k && s.type != GemmType::kNormal && s.type != GemmType::kBatched)
    return "split-K is for dense and batched GEMMs only";
  if (const char* e = k_cluster_error(s)) return e;
  if (needs_reduce_kernel(s) && (s.out != DType::kFP32 || s.has_c || s.has_bias))
    return "a split-K kernel stores FP32 partial sums, with no C and no bias (the reduce kernel applies them)";
  if (s.fused_reduce && !s.split_k) return "fused_reduce reduces split-K partial sums: it needs split_k";
  if (s.fused_reduce && s.swap_ab) return "fused_reduce is for unswapped kernels (swap_ab stores its own way)";
  if (s.fused_reduce && s.block_n > kFusedReduceMaxBlockN) return "fused_reduce takes tiles up to 144 wide";
  if (s.split_k && s.dynamic_units) return "split-K runs without a companion launch";
  if (s.k_serpentine && s.dynamic_units)
    return "k_serpentine runs without a companion launch (a claimed unit's wave is not its index's)";
  if (s.k_serpentine && s.type == GemmType::kKGroupedContiguous)
    return "k_serpentine is not for k-grouped GEMMs (a group's last k-step is the one cleared: k_tail.cuh)";
  // Register edge (sm_90a, nvcc 13.0): a fused 128x128 with C and a bias spilled 20 bytes.
  if (s.k_serpentine && s.fused_reduce) return "k_serpentine is not for fused_reduce kernels";
  return nullptr;
}

// A hash of every field, so that a field the JIT writes but spec_of() does not read (or reads
// wrongly) fails the kernel's compile: the generated traits carry the host's fingerprint of the
// spec, and the kernel static_asserts that the spec it read back has the same.
TC_HOST_DEVICE constexpr uint64_t spec_fingerprint(const GemmKernelSpec& s) {
  const uint32_t fields[] = {s.block_m,
                             s.block_n,
                             s.stages,
                             s.cluster.m,
                             s.cluster.n,
                             s.consumer_warpgroups,
                             static_cast<uint32_t>(s.out),
                             s.has_c ? 1u : 0u,
                             s.has_bias ? 1u : 0u,
                             static_cast<uint32_t>(s.bias_type),
                             static_cast<uint32_t>(s.type),
                             static_cast<uint32_t>(s.contiguous_layout),
                             s.dynamic_units ? 1u : 0u,
                             s.split_k ? 1u : 0u,
                             static_cast<uint32_t>(s.layout)};
  uint64_t h = 14695981039346656037ull;  // FNV-1a over the fields' bytes
  for (uint32_t f : fields)
    for (uint32_t byte = 0; byte < 4; ++byte) h = (h ^ ((f >> (8 * byte)) & 0xFFu)) * 1099511628211ull;
  // swap_ab, fused_reduce, k_cluster, split_columns, pingpong and k_serpentine enter only when
  // set, so that every spec without them keeps the fingerprint (and the generated source, and so
  // the JIT cache entry) it had before the fields existed. Each enters as its own value (1, 2,
  // k_cluster x 256, 4, 8 and 16), so that none can stand for another.
  const uint32_t late_fields[] = {s.swap_ab ? 1u : 0u,
                                  s.fused_reduce ? 2u : 0u,
                                  s.k_cluster > 1 ? s.k_cluster * 256u : 0u,
                                  s.split_columns ? 4u : 0u,
                                  s.pingpong ? 8u : 0u,
                                  s.k_serpentine ? 16u : 0u};
  for (uint32_t f : late_fields)
    if (f)
      for (uint32_t byte = 0; byte < 4; ++byte) h = (h ^ ((f >> (8 * byte)) & 0xFFu)) * 1099511628211ull;
  return h;
}

namespace spec_detail {
// Traits::kSwapAB where the traits have it, else false: the JIT writes the field only for swapped
// kernels (gemm_source.cpp), so that unswapped sources stay as they were. (A misspelt field still
// fails: the fingerprint would not match.)
template <class Traits>
TC_HOST_DEVICE constexpr auto swap_ab(int) -> decltype(Traits::kSwapAB, bool()) {
  return Traits::kSwapAB;
}
template <class Traits>
TC_HOST_DEVICE constexpr bool swap_ab(long) {
  return false;
}
// Traits::kFusedReduce where the traits have it, else false (written only when set, likewise).
template <class Traits>
TC_HOST_DEVICE constexpr auto fused_reduce(int) -> decltype(Traits::kFusedReduce, bool()) {
  return Traits::kFusedReduce;
}
template <class Traits>
TC_HOST_DEVICE constexpr bool fused_reduce(long) {
  return false;
}
// Traits::kKCluster where the traits have it, else 1 (written only when above 1, likewise).
template <class Traits>
TC_HOST_DEVICE constexpr auto k_cluster(int) -> decltype(Traits::kKCluster, uint32_t()) {
  return Traits::kKCluster;
}
template <class Traits>
TC_HOST_DEVICE constexpr uint32_t k_cluster(long) {
  return 1;
}
// Traits::kSplitColumns where the traits have it, else false (written only when set, likewise).
template <class Traits>
TC_HOST_DEVICE constexpr auto split_columns(int) -> decltype(Traits::kSplitColumns, bool()) {
  return Traits::kSplitColumns;
}
template <class Traits>
TC_HOST_DEVICE constexpr bool split_columns(long) {
  return false;
}
// Traits::kPingpong where the traits have it, else false (written only when set, likewise).
template <class Traits>
TC_HOST_DEVICE constexpr auto pingpong(int) -> decltype(Traits::kPingpong, bool()) {
  return Traits::kPingpong;
}
template <class Traits>
TC_HOST_DEVICE constexpr bool pingpong(long) {
  return false;
}
// Traits::kKSerpentine where the traits have it, else false (written only when set, likewise).
template <class Traits>
TC_HOST_DEVICE constexpr auto k_serpentine(int) -> decltype(Traits::kKSerpentine, bool()) {
  return Traits::kKSerpentine;
}
template <class Traits>
TC_HOST_DEVICE constexpr bool k_serpentine(long) {
  return false;
}
}  // namespace spec_detail

// The spec a generated traits struct describes: the one place the kernel reads the field names
// (the JIT writes them: src/api/gemm_source.cpp). A missing field fails to compile (kSwapAB,
// kFusedReduce, kKCluster, kSplitColumns, kPingpong and kKSerpentine, which only the kernels that
// have them carry, excepted).
template <class Traits>
TC_HOST_DEVICE constexpr GemmKernelSpec spec_of() {
  GemmKernelSpec s;
  s.block_m = Traits::kBlockM;
  s.block_n = Traits::kBlockN;
  s.stages = Traits::kStages;
  s.cluster = ClusterShape{Traits::kClusterM, Traits::kClusterN};
  s.consumer_warpgroups = Traits::kConsumerWarpgroups;
  s.out = Traits::kOutput;
  s.has_c = Traits::kHasC;
  s.has_bias = Traits::kHasBias;
  s.bias_type = Traits::kBiasType;
  s.type = Traits::kGemmType;
  s.contiguous_layout = Traits::kContiguousLayout;
  s.dynamic_units = Traits::kDynamicUnits;
  s.split_k = Traits::kSplitK;
  s.layout = Traits::kLayout;
  s.swap_ab = spec_detail::swap_ab<Traits>(0);
  s.fused_reduce = spec_detail::fused_reduce<Traits>(0);
  s.k_cluster = spec_detail::k_cluster<Traits>(0);
  s.split_columns = spec_detail::split_columns<Traits>(0);
  s.pingpong = spec_detail::pingpong<Traits>(0);
  s.k_serpentine = spec_detail::k_serpentine<Traits>(0);
  return s;
}

}  // namespace tilecast
