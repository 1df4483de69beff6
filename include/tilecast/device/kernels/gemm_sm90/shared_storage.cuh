// The kernel's shared memory: the operand ring, the epilogue slabs and the barriers, laid out
// once so that the host sizes the launch from the same struct.
#pragma once

#include "tilecast/device/kernels/gemm_sm90/config.cuh"

namespace tilecast {

template <typename Cfg>
struct GemmSm90Smem {
  // 128-byte swizzled tiles must start on 1024-byte boundaries (8 rows of 128 bytes), for the
  // TMA and for wgmma's descriptors alike.
  alignas(1024) uint8_t a[Cfg::kStages][Cfg::kTileABytes];
  alignas(1024) uint8_t b[Cfg::kStages][Cfg::kTileBBytes];
  alignas(1024) uint8_t slabs[Cfg::kConsumerWarpgroups][Cfg::kSlabBuffers][Cfg::kSlabBytes];
  uint64_t full[Cfg::kStages];   // flipped by the TMA bytes landing (and the producer's arrive)
  uint64_t empty[Cfg::kStages];  // every consumer warp of every CTA of the cluster arrives
  uint64_t unit_full[Cfg::kUnitSlots];
  uint64_t unit_empty[Cfg::kUnitSlots];
  uint32_t unit_slot[Cfg::kUnitSlots];
};

// Dynamic shared memory to ask for: the struct plus room to align its start to 1024 bytes.
template <typename Cfg>
inline constexpr uint32_t kGemmSm90SmemBytes = sizeof(GemmSm90Smem<Cfg>) + 1024;

template <typename Cfg>
inline constexpr bool kGemmSm90LayoutAgrees =
    kGemmSm90SmemBytes<Cfg> == gemm_sm90_smem_bytes(Cfg::kBlockM, Cfg::kBlockN, Cfg::kStages,
                                                    Cfg::kConsumerWarpgroups, Cfg::kSlabBuffers);

static_assert(sizeof(TmaDescriptor) == 128, "a CUtensorMap is 128 bytes");

}  // namespace tilecast
