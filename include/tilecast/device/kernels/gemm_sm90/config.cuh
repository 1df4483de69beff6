// The kernel's compile-time configuration: the spec a generated traits struct describes and the
// geometry derived from it (spec.cuh, geometry.cuh), under the names the kernel's code uses; and
// the run-time parameters of a launch.
#pragma once

#include "tilecast/device/kernels/gemm_sm90/geometry.cuh"
#include "tilecast/device/kernels/gemm_sm90/layout_fault.cuh"
#include "tilecast/device/pipeline/mbarrier.cuh"
#include "tilecast/device/pipeline/ring_protocol.cuh"
#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast {

// A CUtensorMap, opaque: 128 bytes, 64-byte aligned. Our own type so that device headers need
// not include the driver's cuda.h (which NVRTC cannot).
struct alignas(64) TmaDescriptor {
  uint64_t opaque[16];
};
static_assert(sizeof(TmaDescriptor) == 128, "a CUtensorMap is 128 bytes");

template <class Traits>
struct GemmSm90Config {
  static constexpr GemmKernelSpec kSpec = spec_of<Traits>();
  static_assert(spec_fingerprint(kSpec) == Traits::kSpecFingerprint,
                "the traits describe another spec than the one spec_of() reads back: a field is written but not read");
  static_assert(gemm_geometry_error(kSpec) == nullptr, "the planner emitted a spec that breaks a rule of spec.cuh");
  static constexpr GemmGeometry kGeo = gemm_geometry(kSpec);

  static constexpr uint32_t kBlockM = kSpec.block_m;
  static constexpr uint32_t kBlockN = kSpec.block_n;
  static constexpr uint32_t kBlockK = kGeo.block_k;
  static constexpr uint32_t kStages = kSpec.stages;
  static constexpr ClusterShape kCluster = kSpec.cluster;
  static constexpr uint32_t kClusterSize = kCluster.size();
  static constexpr uint32_t kConsumerWarpgroups = kSpec.consumer_warpgroups;
  static constexpr bool kOutputFP32 = kSpec.out == DType::kFP32;
  static constexpr bool kHasC = kSpec.has_c;
  static constexpr bool kHasBias = kSpec.has_bias;
  static constexpr bool kBiasFP32 = kSpec.bias_type == DType::kFP32;
  static constexpr bool kEpilogueLoader = kGeo.epilogue_loader;
  // C and the bias by TMA, through the epilogue loader (the swapped and fused split-K epilogues
  // read them from global memory instead).
  static constexpr bool kLoadsC = kGeo.c_by_tma;
  static constexpr bool kLoadsBias = kGeo.bias_by_tma;
  static constexpr GemmType kGemmType = kSpec.type;
  static constexpr ContiguousLayout kContiguousLayout = kSpec.contiguous_layout;
  static constexpr bool kDynamicUnits = kSpec.dynamic_units;
  static constexpr bool kSplitK = kSpec.split_k;
  static constexpr bool kFusedReduce = kSpec.fused_reduce;
  // Split-K reduced across the cluster: its kKCluster CTAs are one tile's slices (1: off).
  static constexpr uint32_t kKCluster = kSpec.k_cluster;
  static constexpr bool kClusterReduce = kKCluster > 1;
  static constexpr uint32_t kReduceLd = kGeo.reduce_ld;
  static constexpr GemmLayout kLayout = kSpec.layout;
  static constexpr bool kSwapAB = kSpec.swap_ab;
  static constexpr OperandTile kATile = kGeo.a_tile;
  static constexpr OperandTile kBTile = kGeo.b_tile;

  static constexpr uint32_t kThreads = kGeo.threads;
  static constexpr uint32_t kConsumerWarps = kGeo.consumer_warps;
  static constexpr uint32_t kWarpgroupM = kGeo.warpgroup_m;
  static constexpr uint32_t kWarpgroupN = kGeo.warpgroup_n;
  static constexpr uint32_t kAtomsM = kGeo.atoms_m;
  static constexpr bool kSplitColumns = kSpec.split_columns;
  // The tile row and column where consumer warpgroup `wg`'s part of the tile starts.
  // The consumer warpgroups take whole tiles in turn (spec.cuh, consumer.cuh).
  static constexpr bool kPingpong = kSpec.pingpong;
  // Odd waves walk K backwards (spec.cuh; the scheduler's TileWork::k_step).
  static constexpr bool kKSerpentine = kSpec.k_serpentine;
  static TC_HOST_DEVICE constexpr uint32_t warpgroup_row(uint32_t wg) {
    return kSplitColumns || kPingpong ? 0 : wg * kWarpgroupM;
  }
  static TC_HOST_DEVICE constexpr uint32_t warpgroup_col(uint32_t wg) { return kSplitColumns ? wg * kWarpgroupN : 0; }
  static constexpr uint32_t kTileABytes = kGeo.tile_a_bytes;
  static constexpr uint32_t kTileBBytes = kGeo.tile_b_bytes;
  static constexpr uint32_t kStageTxBytes = kGeo.stage_tx_bytes;
  static constexpr uint32_t kSlabCols = kGeo.slab_cols;
  static constexpr uint32_t kSlabBytes = kGeo.slab_bytes;
  static constexpr uint32_t kSlabBuffers = kGeo.slab_buffers;
  static constexpr uint32_t kSlabs = kGeo.slabs;
  static constexpr uint32_t kNarrowSlabCols = kGeo.narrow_slab_cols;
  static constexpr uint32_t kProducerRegisters = kGeo.producer_registers;
  static constexpr uint32_t kConsumerRegisters = kGeo.consumer_registers;
  static constexpr uint32_t kUnitSlots = kGeo.unit_slots;

  // A k_cluster kernel's peers read other K slices: nothing is multicast, and each CTA's operand
  // ring is its own (released on its own barriers, not on rank 0's). Each stage is released by the
  // warps that read it (kGeo.stage_readers).
  static constexpr RingProtocol kOperandRing = kClusterReduce ? local_ring_protocol(kStages, kConsumerWarps)
                                                              : operand_ring_protocol(kCluster, kGeo.stage_readers, kStages);
  static constexpr RingProtocol kUnitRing = unit_ring_protocol(kCluster, kGeo.unit_readers_per_cta, kUnitSlots);
  // Each consumer warpgroup's C ring: filled by the epilogue loader, released by the
  // warpgroup's first thread once the slab's TMA store has read it.
  static constexpr RingProtocol kCRing = local_ring_protocol(kSlabBuffers, 1);
  // The tile ring: filled by the producer thread, released by every consumer warp and the
  // epilogue loader.
  static constexpr uint32_t kTileSlots = kGeo.tile_slots;
  static constexpr RingProtocol kTileRing = local_ring_protocol(kTileSlots, kConsumerWarps + (kEpilogueLoader ? 1 : 0));
  // The bias ring: released by the first thread of every consumer warpgroup that stores the tile
  // (with kPingpong the one whose turn it is).
  static constexpr RingProtocol kBiasRing =
      bias_ring_protocol(kGeo.bias_slots ? kGeo.bias_slots : 1, kConsumerWarpgroups, kPingpong);
  static constexpr uint32_t kBiasSlots = kGeo.bias_slots ? kGeo.bias_slots : 1;
};

// Run-time parameters of a launch (by value, in constant parameter memory).
struct GemmParams {
  GemmProblem problem;  // group_data in device memory
  // The plan's schedule. The kernel takes the block and cluster fields from its compile-time
  // spec instead (the same values), so that the scheduler's arithmetic folds.
  TileConfig schedule;
  uint32_t num_clusters = 1;  // clusters in this launch
  // The bytes that land in one stage for the last row of tiles, whose A box stops at M
  // (a_last_box_for; the stage's full bytes where it does not). A parameter, not worked out from M
  // in the kernel: the producer would hold it in a register for the whole k-loop, and with 56 of
  // them a 192x192 producer with C and a bias spilled on its timeout path.
  uint32_t a_last_stage_tx_bytes = 0;
  // D = alpha * A * B^T + beta * C + bias: C (read by TMA) has D's dtype; bias has one element
  // per column of D, added to every row.
  float alpha = 1.0f, beta = 1.0f;
  // D itself, for the slabs the TMA cannot store (see Epilogue::store).
  void* d_ptr = nullptr;
  uint64_t ldd = 0, d_batch = 0;
  // The swapped kernel (swap_ab) and the split-K ones that reduce in the GEMM (fused_reduce,
  // k_cluster) read C and the bias from here rather than by TMA, and store D here (epilogue_swapped.cuh,
  // epilogue_fused_split.cuh, epilogue_cluster_split.cuh): C has D's dtype, the bias one element
  // per column of D.
  const void* c_ptr = nullptr;
  uint64_t ldc = 0, c_batch = 0;
  const void* bias_ptr = nullptr;
  // Dynamic units: the counter that all launches sharing the problem claim from, and the count of
  // clusters that finished; the last cluster to finish resets both for the next GEMM.
  uint32_t* unit_counter = nullptr;
  uint32_t* done_counter = nullptr;
  uint32_t total_clusters = 0;  // clusters of all launches sharing the counter
  // Split-K reduced in the GEMM (fused_reduce): the FP32 partial sums, [k_splits][batches][m][ws_ld]
  // as the reduce kernel reads them, and one arrival counter per (batch, tile, consumer
  // warpgroup), zero between GEMMs (the last arrival resets its own). D, C and the bias are
  // d_ptr, c_ptr and bias_ptr above.
  float* workspace = nullptr;
  uint64_t ws_ld = 0, ws_batch = 0, ws_slice = 0;
  uint32_t* tile_counters = nullptr;
  WaitBound wait;               // bound on every barrier wait, and where a timeout is recorded
  LayoutFaultRecord* layout_fault = nullptr;  // host-mapped: where impossible group data is recorded
};

// What the consumers need of a step's TileWork, as the producer publishes it in the tile ring.
struct TileInfo {
  uint32_t flags;  // kTileValid, kTileEnd
  uint32_t num_k_steps;
  uint32_t group, row, rows, col, cols;
  uint32_t k;  // the group's K columns (k_end - k_begin): its last k-step may be partial (k_tail.cuh)
};
inline constexpr uint32_t kTileValid = 1, kTileEnd = 2;
static_assert(sizeof(TileInfo) == kTileInfoBytes, "the tile ring's slot size");

// The scheduler's config for this kernel: the plan's schedule with the compile-time block and
// cluster fields.
template <typename Cfg>
TC_HOST_DEVICE TileConfig kernel_schedule(const GemmParams& p) {
  TileConfig c = p.schedule;
  c.block_m = Cfg::kBlockM;
  c.block_n = Cfg::kBlockN;
  c.block_k = Cfg::kBlockK;
  c.cluster = Cfg::kCluster;
  c.k_cluster = Cfg::kKCluster;
  // A static kernel's unit is its cluster (only a companion pair claims larger units, plan_cost.cpp's
  // companion_launch): a constant, so that the scheduler divides by the cluster's sides, not by
  // parameters. Measured on the H200 (bench/results/2026-12-04-h200-producer-prologue.md): the
  // first load 90-380 cycles earlier, the time unchanged (26 rows, geomean 0.999).
  if constexpr (!Cfg::kDynamicUnits) c.unit_m = c.unit_n = 0;
  return c;
}

template <typename Cfg>
TC_HOST_DEVICE GemmProblem kernel_problem(const GemmParams& p) {
  GemmProblem problem = p.problem;
  // Constants, so that the scheduler's type and layout branches fold away.
  problem.type = Cfg::kGemmType;
  problem.contiguous_layout = Cfg::kContiguousLayout;
  if constexpr (!Cfg::kSplitK) problem.k_splits = 1;
  return problem;
}

}  // namespace tilecast
