// The geometry of one GEMM kernel: threads, TMA boxes, epilogue slabs, registers and the
// shared-memory layout with its size, all derived from a GemmKernelSpec here and nowhere else.
// The kernel lays out its shared memory from it (smem.cuh) and the host sizes the launch and the
// TMA descriptors from it; the planner asks it which stage counts fit.
#pragma once

#include "tilecast/device/kernels/gemm_sm90/operand_tile.cuh"
#include "tilecast/device/kernels/gemm_sm90/spec.cuh"

namespace tilecast {

// 64 BF16 = 128 bytes: one row of a K slice fills one 128-byte swizzle span, the widest the TMA
// and wgmma share.
inline constexpr uint32_t kGemmBlockK = 64;
// Dynamic shared memory an SM90 CTA may opt into (227 KiB).
inline constexpr uint32_t kSm90MaxSmemBytes = 232448;
// 128-byte swizzled tiles start on 1024-byte boundaries (8 rows of 128 bytes), for the TMA and
// for wgmma's descriptors alike.
inline constexpr uint32_t kSwizzleAtomBytes = 1024;
// The register file of an SM, in 32-bit registers; a kernel with __launch_bounds__(threads, 1)
// gets at most this many over its threads, in steps of 8 per thread, and at most 255 each.
inline constexpr uint32_t kSm90RegistersPerSm = 65536;
inline constexpr uint32_t kMaxRegistersPerThread = 255;

// The most slab buffers a consumer warpgroup takes with C (the C ring's depth).
inline constexpr uint32_t kMaxCSlabBuffers = 8;
// One TileInfo (config.cuh) in the tile ring.
inline constexpr uint32_t kTileInfoBytes = 32;

// Byte offsets into the kernel's dynamic shared memory once its start is aligned to 1024.
struct GemmSmemLayout {
  uint32_t a = 0, b = 0, slabs = 0;  // operand rings and epilogue slabs, each 1024-aligned
  uint32_t bias = 0;                 // the bias ring's tiles (with has_bias), 128-aligned
  uint32_t reduce = 0;               // k_cluster: this CTA's FP32 partial tile, 128-aligned
  uint32_t full = 0, empty = 0;      // the operand ring's mbarriers
  uint32_t c_full = 0, c_empty = 0;  // each consumer warpgroup's C ring (its slab buffers), with has_c
  uint32_t bias_full = 0, bias_empty = 0;
  uint32_t tile_full = 0, tile_empty = 0, tile_slot = 0;  // the tile ring: the producer's work, for the consumers
  uint32_t unit_full = 0, unit_empty = 0, unit_slot = 0;  // the dynamic-unit ring
  uint32_t k_tail = 0;               // k-grouped: the consumers' word to the k-tail clearers (k_tail.cuh)
  uint32_t k_tail_ready = 0;         // k-grouped: its two mbarriers, 8 bytes each (0: none)
  uint32_t k_tail_cleared = 0;
  uint32_t reduce_full = 0;          // k_cluster: every slice's partial tile is stored (8 bytes; 0: none)
  uint32_t reduce_empty = 0;         // k_cluster: every slice has read this CTA's partial tile
  uint32_t end = 0;                  // bytes of the layout
  uint32_t launch_bytes = 0;         // to ask for at launch: the layout plus the alignment slack
};

struct GemmGeometry {
  // One producer warpgroup (a single thread of it issues the TMA loads) and the consumers.
  uint32_t threads = 0;
  uint32_t consumer_warps = 0;
  uint32_t warpgroup_m = 0;   // rows per consumer warpgroup (all block_m with split_columns or pingpong)
  uint32_t warpgroup_n = 0;   // columns per consumer warpgroup (all block_n without split_columns)
  uint32_t atoms_m = 0;       // m64 wgmma atoms per consumer warpgroup
  // Consumer warps that read and release each stage of the operand ring: all of them, or with
  // pingpong the four of the warpgroup whose turn it is.
  uint32_t stage_readers = 0;
  uint32_t accumulators = 0;  // FP32 registers per consumer thread
  uint32_t block_k = 0;
  // Registers after setmaxnreg: the consumers what their accumulators need, the producer
  // warpgroup the rest of the CTA's launch_registers x threads (gemm_geometry says how much).
  uint32_t producer_registers = 0, consumer_registers = 0, launch_registers = 0;

  uint32_t tile_a_bytes = 0, tile_b_bytes = 0;
  uint32_t stage_tx_bytes = 0;  // bytes that land in one stage: the A and B tiles
  // The operand tiles as the layout stores them (operand_tile.cuh): K-major one box per tile,
  // MN-major one box per 64 rows.
  OperandTile a_tile, b_tile;
  TmaBox a_box, b_box;

  // Epilogue: each consumer warpgroup stores its part of the tile in slabs of 64 rows x 128 bytes
  // through a TMA store (box d_box, 128-byte swizzle). A warpgroup's width that is no multiple of
  // the slab's ends in a narrower slab, stored through d_narrow_box, unswizzled (cols 0: no narrow
  // slab).
  uint32_t slab_rows = 0, slab_cols = 0, slab_bytes = 0;
  uint32_t slabs = 0;             // slabs per 64-row atom of a warpgroup, the narrow one included
  uint32_t narrow_slab_cols = 0;  // 0, or the columns of the last, narrow slab
  // Two slab buffers per warpgroup where they fit beside the ring (filling one overlaps storing
  // the other); where the second would cost a stage, one (128x144 at 6 stages: what a one-wave
  // shape such as 4096x576x7168 needs to hide its load latency).
  uint32_t slab_buffers = 0;
  TmaBox d_box, d_narrow_box;

  // C and bias reach shared memory by TMA, loaded by the epilogue loader (one thread of the
  // producer warpgroup's second warp): C into the slab buffers, which the epilogue then
  // overwrites with D in place (a C ring per consumer warpgroup, one slot per slab buffer); the
  // bias tile of block_n columns into a ring of its own, read by every consumer warpgroup.
  bool epilogue_loader = false;
  bool c_by_tma = false, bias_by_tma = false;  // C and the bias, where the loader brings them
  TmaBox c_box, c_narrow_box, bias_box;
  uint32_t bias_slots = 0, bias_tile_bytes = 0;

  // The tile ring: the producer publishes each step's work (a TileInfo) and every consumer warp
  // and the epilogue loader read it there, so they keep no scheduler state in the registers that
  // the accumulators (or the loader's 56) need. Two slots more than stages: the producer runs at
  // most about that many tiles ahead of the consumers.
  uint32_t tile_slots = 0;

  // The dynamic-unit ring that broadcasts claimed units to the cluster, and its readers per CTA:
  // the producer thread alone.
  uint32_t unit_slots = 0, unit_readers_per_cta = 0;

  // Split-K reduced across the cluster (k_cluster): the CTA's FP32 partial tile, block_m rows of
  // reduce_ld floats. The row pitch is padded so that it is 8 or 24 banks mod 32: the half-warp
  // that stores a wgmma fragment's float2s (4 rows x 4 pairs) then hits 32 distinct banks.
  uint32_t reduce_ld = 0, reduce_bytes = 0;

  GemmSmemLayout smem;
};

namespace geometry_detail {

TC_HOST_DEVICE constexpr uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }
TC_HOST_DEVICE constexpr uint32_t cmin(uint32_t a, uint32_t b) { return a < b ? a : b; }

// TMA loads into shared memory start on 128-byte boundaries.
inline constexpr uint32_t kTmaSmemAlign = 128;

TC_HOST_DEVICE constexpr GemmSmemLayout layout(const GemmGeometry& g, uint32_t stages, uint32_t consumer_warpgroups,
                                               uint32_t slab_buffers, bool has_c, bool k_grouped) {
  GemmSmemLayout l;
  l.a = 0;
  l.b = align_up(l.a + stages * g.tile_a_bytes, kSwizzleAtomBytes);
  l.slabs = align_up(l.b + stages * g.tile_b_bytes, kSwizzleAtomBytes);
  l.bias = align_up(l.slabs + consumer_warpgroups * slab_buffers * g.slab_bytes, kTmaSmemAlign);
  // The partial tile (k_cluster only: no padding for the kernels without one, whose stage counts
  // the 128-byte alignment would change).
  l.reduce = g.reduce_bytes ? align_up(l.bias + g.bias_slots * g.bias_tile_bytes, kTmaSmemAlign)
                            : l.bias + g.bias_slots * g.bias_tile_bytes;
  l.full = align_up(l.reduce + g.reduce_bytes, 8);
  l.empty = l.full + stages * 8;
  l.c_full = l.empty + stages * 8;
  const uint32_t c_slots = has_c ? consumer_warpgroups * slab_buffers : 0;
  l.c_empty = l.c_full + c_slots * 8;
  l.bias_full = l.c_empty + c_slots * 8;
  l.bias_empty = l.bias_full + g.bias_slots * 8;
  l.tile_full = l.bias_empty + g.bias_slots * 8;
  l.tile_empty = l.tile_full + g.tile_slots * 8;
  l.tile_slot = l.tile_empty + g.tile_slots * 8;  // kTileInfoBytes each, 8-aligned
  l.unit_full = l.tile_slot + g.tile_slots * kTileInfoBytes;
  l.unit_empty = l.unit_full + g.unit_slots * 8;
  l.unit_slot = l.unit_empty + g.unit_slots * 8;
  l.k_tail = l.unit_slot + g.unit_slots * 4;
  l.end = l.k_tail + 4;
  if (k_grouped) {
    l.k_tail_ready = align_up(l.end, 8);
    l.k_tail_cleared = l.k_tail_ready + 8;
    l.end = l.k_tail_cleared + 8;
  }
  if (g.reduce_bytes) {
    l.reduce_full = align_up(l.end, 8);
    l.reduce_empty = l.reduce_full + 8;
    l.end = l.reduce_empty + 8;
  }
  l.launch_bytes = align_up(l.end, kSwizzleAtomBytes) + kSwizzleAtomBytes;
  return l;
}

}  // namespace geometry_detail

// The C slab buffers that hold every slab of a consumer warpgroup's share of a tile (at most
// kMaxCSlabBuffers): with these the loader fetches a tile's whole C while its main loop runs.
TC_HOST_DEVICE constexpr uint32_t c_slab_buffers_for_every_slab(const GemmGeometry& g) {
  return geometry_detail::cmin(g.slabs * g.atoms_m, kMaxCSlabBuffers);
}

// Warpgroup 0 is the producer's, warpgroups 1.. the consumers': thread 128 is the first consumer's.
inline constexpr uint32_t kWarpgroupThreads = 128;
inline constexpr uint32_t kFirstConsumerThread = kWarpgroupThreads;

TC_HOST_DEVICE constexpr GemmGeometry gemm_geometry(const GemmKernelSpec& s) {
  GemmGeometry g;
  g.threads = kWarpgroupThreads * (1 + s.consumer_warpgroups);
  g.consumer_warps = 4 * s.consumer_warpgroups;
  g.warpgroup_m = s.split_columns || s.pingpong ? s.block_m : s.block_m / s.consumer_warpgroups;
  g.warpgroup_n = s.split_columns ? s.block_n / s.consumer_warpgroups : s.block_n;
  g.atoms_m = g.warpgroup_m / kWgmmaAtomRows;
  g.stage_readers = s.pingpong ? g.consumer_warps / s.consumer_warpgroups : g.consumer_warps;
  g.accumulators = g.atoms_m * g.warpgroup_n / 2;
  g.block_k = kGemmBlockK;
  const uint32_t cap = kSm90RegistersPerSm / g.threads / 8 * 8;
  g.launch_registers = cap < kMaxRegistersPerThread ? cap : kMaxRegistersPerThread;
  // setmaxnreg's split of the CTA's registers (launch_registers x threads): the consumers take
  // what their accumulators need and the producer warpgroup the rest. One consumer warpgroup: 256
  // threads launch with 255 each, the consumer takes 256 and the producer keeps 248 (it had 56,
  // and spilled 8 bytes with dynamic units in clusters of 4x1, m-grouped and masked, as a
  // producer of 56 had at 128x128). Two: 224 where the accumulators need it, 208 where they hold
  // at most 64, the producer 56 or 88. Three (192-row tiles): 512 threads launch with 128 each;
  // the consumers take 152 and leave the producer 56.
  constexpr uint32_t kSmallAccumulators = 64;
  g.consumer_registers = s.consumer_warpgroups == 1   ? 256
                         : s.consumer_warpgroups == 3 ? 152
                         : g.accumulators <= kSmallAccumulators ? 208
                                                                : 224;
  const uint32_t left = g.launch_registers * g.threads - g.consumer_registers * s.consumer_warpgroups * kWarpgroupThreads;
  g.producer_registers = left / kWarpgroupThreads / 8 * 8;

  g.a_tile = operand_tile(a_mn_major(s.layout), s.block_m, g.block_k);
  g.b_tile = operand_tile(b_mn_major(s.layout), s.block_n, g.block_k);
  g.tile_a_bytes = g.a_tile.bytes;
  g.tile_b_bytes = g.b_tile.bytes;
  // Every box lands whole (the TMA zero-fills what lies outside the tensor), so a stage's bytes
  // do not depend on where the tile sits; only A's box for the last row of tiles may be shorter
  // (a_last_box_for).
  g.stage_tx_bytes = g.tile_a_bytes + g.tile_b_bytes;
  g.a_box = g.a_tile.box;
  g.b_box = g.b_tile.box;

  g.slab_rows = kWgmmaAtomRows;
  g.slab_cols = kSwizzleSpanBytes / dtype_bytes(s.out);
  g.slab_bytes = g.slab_rows * kSwizzleSpanBytes;
  g.slabs = (g.warpgroup_n + g.slab_cols - 1) / g.slab_cols;
  g.narrow_slab_cols = g.warpgroup_n % g.slab_cols;
  g.d_box = {g.slab_cols, g.slab_rows};
  g.d_narrow_box = {g.narrow_slab_cols, g.narrow_slab_cols ? g.slab_rows : 0};

  // The swapped kernel's epilogue and the split-K ones that reduce in the GEMM read C and the bias
  // themselves, from global memory (epilogue_swapped.cuh, epilogue_fused_split.cuh,
  // epilogue_cluster_split.cuh): no loader.
  g.epilogue_loader = (s.has_c || s.has_bias) && !s.swap_ab && !s.fused_reduce && s.k_cluster == 1;
  g.c_by_tma = g.epilogue_loader && s.has_c;
  g.bias_by_tma = g.epilogue_loader && s.has_bias;
  g.c_box = s.has_c ? g.d_box : TmaBox{};
  g.c_narrow_box = s.has_c ? g.d_narrow_box : TmaBox{};
  // Two bias tiles: the loader fills the next tile's while the consumers read this one's.
  g.bias_slots = g.bias_by_tma ? 2 : 0;
  g.bias_tile_bytes = g.bias_by_tma ? geometry_detail::align_up(s.block_n * dtype_bytes(s.bias_type), geometry_detail::kTmaSmemAlign) : 0;
  g.bias_box = g.bias_by_tma ? TmaBox{s.block_n, 1} : TmaBox{};

  if (s.k_cluster > 1) {
    g.reduce_ld = s.block_n % 16 == 0 ? s.block_n + 8 : s.block_n;
    g.reduce_bytes = s.block_m * g.reduce_ld * 4;
  }

  g.tile_slots = s.stages + 2;
  g.unit_slots = 2;
  g.unit_readers_per_cta = 1;

  // Slab buffers: without C two where they fit, else one. With C as many as fit up to one per slab
  // of the warpgroup's share of a tile, so that the loader can fetch the tile's C while the main
  // loop runs (deepest_stages keeps at least two).
  // The swapped and both fused split-K kernels store from registers and use none; they keep one
  // (the layout's types need it; at most 16 KiB).
  const bool register_epilogue = s.swap_ab || s.fused_reduce || s.k_cluster > 1;
  const uint32_t wanted =
      register_epilogue ? 1 : s.has_c ? c_slab_buffers_for_every_slab(g) : 2;
  for (g.slab_buffers = wanted; g.slab_buffers >= 1; --g.slab_buffers) {
    g.smem = geometry_detail::layout(g, s.stages, s.consumer_warpgroups, g.slab_buffers, g.c_by_tma,
                                     s.type == GemmType::kKGroupedContiguous);
    if (g.smem.launch_bytes <= kSm90MaxSmemBytes || g.slab_buffers == 1) break;
  }
  return g;
}

// A's TMA box for the last row of tiles of a problem of `m` rows (the kernel's: the caller's N when
// operands are swapped); every other row of tiles takes the tile's box. A box that reaches past the
// tensor's last row lands far slower than its bytes say: on the H200 128x64 tiles in 2 slices ran
// 128x4104x7168 in 31 us and 65x4104x7168 (63 of a box's 128 rows past M) in 38-40 us; 64x64
// tiles ran 128x4104x7168 in 32 us and 65x4104x7168 (a second row of tiles with 63 of 64 rows
// past M) in 41-42 us (bench/results/2026-12-02-h200-box-rows.md). So for dense and batched
// problems with K-major A, the last row of tiles loads the rows it has when it has fewer than a
// tile's (all of M where one tile holds them); the tile's rows past M keep whatever the ring held,
// and they reach only accumulator rows that no epilogue stores. Elsewhere the box is the tile's
// (the TMA zero-fills what lies outside the tensor).
TC_HOST_DEVICE constexpr bool a_box_stops_at_m(const GemmKernelSpec& s) {
  return (s.type == GemmType::kNormal || s.type == GemmType::kBatched) && !a_mn_major(s.layout);
}

TC_HOST_DEVICE constexpr TmaBox a_last_box_for(const GemmKernelSpec& s, const GemmGeometry& g, uint32_t m) {
  TmaBox box = g.a_box;
  if (a_box_stops_at_m(s) && m % box.rows != 0) box.rows = m % box.rows;
  return box;
}

// The bytes that land in one stage when A's box is `a_box`.
TC_HOST_DEVICE constexpr uint32_t stage_tx_bytes(const GemmGeometry& g, const TmaBox& a_box) {
  return g.stage_tx_bytes - (g.a_box.rows - a_box.rows) * a_box.cols * 2;
}

// Why `s` cannot run (its spec breaks a rule, or its shared memory does not fit), or null.
TC_HOST_DEVICE constexpr const char* gemm_geometry_error(const GemmKernelSpec& s) {
  if (const char* e = gemm_spec_error(s)) return e;
  if (gemm_geometry(s).smem.launch_bytes > kSm90MaxSmemBytes) return "the stages do not fit in 227 KiB of shared memory";
  return nullptr;
}

// The deepest ring (at most kGemmMaxStages) whose shared memory fits, or 0 when not even two do.
// With C, the deepest that leaves the C ring two slab buffers, where one exists: with one, the
// loader can fetch a slab's C only after the previous slab's store has read the buffer.
TC_HOST_DEVICE constexpr uint32_t deepest_stages(GemmKernelSpec s) {
  uint32_t single_buffered = 0;
  for (uint32_t stages = kGemmMaxStages; stages >= 2; --stages) {
    s.stages = stages;
    const GemmGeometry g = gemm_geometry(s);
    if (g.smem.launch_bytes > kSm90MaxSmemBytes) continue;
    if (!g.c_by_tma || g.slab_buffers >= 2) return stages;
    if (!single_buffered) single_buffered = stages;
  }
  return single_buffered;
}

}  // namespace tilecast
