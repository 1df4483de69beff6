// Compile-time shape of one GEMM kernel instantiation, and the sizes derived from it. The JIT
// writes one `GemmSm90Config<...>` per variant with labelled arguments; host and device read the
// same derived numbers (shared-memory size, threads, transaction bytes).
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/pipeline/mbarrier.cuh"
#include "tilecast/device/scheduler/cluster.cuh"
#include "tilecast/device/scheduler/problem.cuh"

namespace tilecast {

// A CUtensorMap, opaque: 128 bytes, 64-byte aligned. Our own type so that device headers need
// not include the driver's cuda.h (which NVRTC cannot).
struct alignas(64) TmaDescriptor {
  uint64_t opaque[16];
};

// Dynamic shared memory an SM90 CTA may opt into (227 KiB).
inline constexpr uint32_t kSm90MaxSmemBytes = 232448;

// Bytes of GemmSm90Smem (shared_storage.cuh) plus the 1024 of alignment slack the launch asks for:
// the A ring, the B ring and the epilogue slabs, each 1024-aligned; 2 * stages + 4 mbarriers and
// 2 unit slots. A test holds this equal to the struct's size.
TC_HOST_DEVICE constexpr uint32_t gemm_sm90_smem_bytes(uint32_t block_m, uint32_t block_n, uint32_t stages,
                                                       uint32_t consumer_warpgroups, uint32_t slab_buffers) {
  constexpr uint32_t kAlign = 1024, kSlabBytes = 64 * 128, kRowBytes = 128;
  const uint32_t a_ring = (stages * block_m * kRowBytes + kAlign - 1) / kAlign * kAlign;
  const uint32_t b_ring = (stages * block_n * kRowBytes + kAlign - 1) / kAlign * kAlign;
  const uint32_t bytes = a_ring + b_ring + consumer_warpgroups * slab_buffers * kSlabBytes + (2 * stages + 4) * 8 + 2 * 4;
  return (bytes + kAlign - 1) / kAlign * kAlign + kAlign;
}

// The epilogue double-buffers its slabs where that fits next to the ring; where it does not, one
// buffer per warpgroup buys a deeper ring (128x144 tiles: 6 stages instead of 5, which is what a
// one-wave shape such as 4096x576x7168 needs to hide its load latency).
TC_HOST_DEVICE constexpr uint32_t gemm_sm90_slab_buffers(uint32_t block_m, uint32_t block_n, uint32_t stages,
                                                         uint32_t consumer_warpgroups) {
  return gemm_sm90_smem_bytes(block_m, block_n, stages, consumer_warpgroups, 2) <= kSm90MaxSmemBytes ? 2 : 1;
}

template <uint32_t kBlockM_, uint32_t kBlockN_, uint32_t kStages_, uint32_t kClusterM_, uint32_t kClusterN_,
          uint32_t kConsumerWarpgroups_, bool kOutputFP32_, bool kHasC_, GemmType kGemmType_, bool kDynamicUnits_>
struct GemmSm90Config {
  static constexpr uint32_t kBlockM = kBlockM_;
  static constexpr uint32_t kBlockN = kBlockN_;
  // 64 BF16 = 128 bytes: one row of a K slice fills one 128-byte swizzle span, the widest the
  // TMA and wgmma share.
  static constexpr uint32_t kBlockK = 64;
  static constexpr uint32_t kStages = kStages_;
  static constexpr ClusterShape kCluster{kClusterM_, kClusterN_};
  static constexpr uint32_t kClusterSize = kClusterM_ * kClusterN_;
  static constexpr uint32_t kConsumerWarpgroups = kConsumerWarpgroups_;
  static constexpr bool kOutputFP32 = kOutputFP32_;
  static constexpr bool kHasC = kHasC_;
  static constexpr GemmType kGemmType = kGemmType_;
  static constexpr bool kDynamicUnits = kDynamicUnits_;

  // One producer warpgroup (a single thread issues the TMA loads) and the consumer warpgroups,
  // each computing kWarpgroupM rows of the tile with m64 wgmma atoms.
  static constexpr uint32_t kThreads = 128 * (1 + kConsumerWarpgroups);
  static constexpr uint32_t kConsumerWarps = 4 * kConsumerWarpgroups;
  static constexpr uint32_t kWarpgroupM = kBlockM / kConsumerWarpgroups;
  static constexpr uint32_t kAtomsM = kWarpgroupM / 64;
  static constexpr uint32_t kAccumulators = kAtomsM * kBlockN / 2;  // FP32 registers per consumer thread

  static constexpr uint32_t kTileABytes = kBlockM * kBlockK * 2;
  static constexpr uint32_t kTileBBytes = kBlockN * kBlockK * 2;
  static constexpr uint32_t kStageTxBytes = kTileABytes + kTileBBytes;

  // Epilogue: each consumer warpgroup stores its rows in slabs of 64 rows x 128 bytes through a
  // TMA store, double-buffered (where it fits) so that writing one slab overlaps storing the
  // previous one.
  static constexpr uint32_t kSlabRows = 64;
  static constexpr uint32_t kSlabCols = kOutputFP32 ? 32 : 64;
  static constexpr uint32_t kSlabBytes = kSlabRows * 128;
  static constexpr uint32_t kSlabBuffers = gemm_sm90_slab_buffers(kBlockM, kBlockN, kStages, kConsumerWarpgroups);
  // Slabs per atom; a last one narrower than kSlabCols (block N 96, 144 or 176) goes through a
  // second D descriptor whose box is that narrow, unswizzled (0: no narrow slab).
  static constexpr uint32_t kSlabs = (kBlockN + kSlabCols - 1) / kSlabCols;
  static constexpr uint32_t kNarrowSlabCols = kBlockN % kSlabCols;

  // Registers after setmaxnreg: the producer keeps few, the consumers take the rest
  // (128 * 56 + 256 * 224 <= 65536 for two consumer warpgroups; the producer's scheduler state
  // spills below 56).
  static constexpr uint32_t kProducerRegisters = 56;
  static constexpr uint32_t kConsumerRegisters = kConsumerWarpgroups == 1 ? 256 : 224;

  // The dynamic-unit ring that broadcasts claimed units to the cluster.
  static constexpr uint32_t kUnitSlots = 2;
  // Readers of a unit slot per CTA: the producer thread and every consumer warp.
  static constexpr uint32_t kUnitReadersPerCta = 1 + kConsumerWarps;

  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 256, "block M is 64, 128 or 256");
  static_assert(kBlockN == 64 || kBlockN == 96 || kBlockN == 128 || kBlockN == 144 || kBlockN == 176 || kBlockN == 192 ||
                    kBlockN == 256,
                "block N is one of the wgmma widths of ptx/wgmma_bf16.cuh");
  static_assert(kWarpgroupM == 64 || kWarpgroupM == 128, "each consumer warpgroup takes 64 or 128 rows");
  static_assert(kAccumulators <= 128, "more accumulators than a consumer thread can hold");
  static_assert(kClusterSize == 1 || kClusterSize == 2 || kClusterSize == 4, "clusters of 1, 2 or 4 CTAs");
  static_assert(kStages >= 2, "the mainloop keeps one stage in flight while it loads the next");
};

// Run-time parameters of a launch (by value, in constant parameter memory).
struct GemmParams {
  GemmProblem problem;       // group_data in device memory
  uint32_t swizzle = 1;      // unit-rows per L2 band
  uint32_t unit_m = 0, unit_n = 0;  // the claimed unit in tiles (0: one cluster)
  uint32_t multicast_a = 1, multicast_b = 1;
  uint32_t num_clusters = 1; // clusters in this launch
  // D = A * B^T + C: C has D's dtype and layout; element (g, r, c) at c_ptr + g * c_batch + r * ldc + c.
  const void* c_ptr = nullptr;
  uint64_t ldc = 0, c_batch = 0;
  // D itself, for the slabs the TMA cannot store (see Epilogue::store).
  void* d_ptr = nullptr;
  uint64_t ldd = 0, d_batch = 0;
  // Dynamic units: the counter that all launches sharing the problem claim from, and the count of
  // clusters that finished; the last cluster to finish resets both for the next GEMM.
  uint32_t* unit_counter = nullptr;
  uint32_t* done_counter = nullptr;
  uint32_t total_clusters = 0;  // clusters of all launches sharing the counter
  WaitBound wait;               // bound on every barrier wait, and where a timeout is recorded
};

}  // namespace tilecast
