// The kernel's shared memory as typed pointers into the layout geometry.cuh computes (the host
// sizes the launch from the same layout).
#pragma once

#include "tilecast/device/kernels/gemm_sm90/config.cuh"

namespace tilecast {

template <typename Cfg>
struct GemmSm90Smem {
  using TileA = uint8_t[Cfg::kTileABytes];
  using TileB = uint8_t[Cfg::kTileBBytes];
  using Slabs = uint8_t[Cfg::kSlabBuffers][Cfg::kSlabBytes];

  TileA* a;             // [stages]
  TileB* b;             // [stages]
  Slabs* slabs;         // [consumer warpgroups][buffers]
  uint64_t* full;       // [stages]: flipped by the TMA bytes landing (and the producer's arrive)
  uint64_t* empty;      // [stages]: released by the consumers (ring_protocol.cuh)
  uint8_t* bias;        // [bias slots][bias tile bytes]
  uint64_t* c_full;     // [consumer warpgroups][slab buffers]: a C slab landed in the buffer
  uint64_t* c_empty;    // [consumer warpgroups][slab buffers]: the buffer's D store has read it
  uint64_t* bias_full;  // [bias slots]
  uint64_t* bias_empty;
  uint64_t* tile_full;  // [tile slots]
  uint64_t* tile_empty;
  TileInfo* tile_slot;
  uint64_t* unit_full;  // [unit slots]
  uint64_t* unit_empty;
  uint32_t* unit_slot;
  uint32_t* k_tail;     // k-grouped: which stage the k-tail clearers clear next (k_tail.cuh)
  uint64_t* k_tail_ready;    // k-grouped: the word is written
  uint64_t* k_tail_cleared;  // k-grouped: the stage is cleared
  float* reduce;             // k_cluster: this CTA's partial tile, [block_m][reduce_ld]
  uint64_t* reduce_full;     // k_cluster: every slice's partial tile is stored
  uint64_t* reduce_empty;    // k_cluster: every slice has summed its band of this CTA's tile

  // `base`: the dynamic shared memory, its start rounded up to 1024 bytes (launch_bytes holds
  // the slack).
  TC_DEVICE explicit GemmSm90Smem(uint8_t* base)
      : a(reinterpret_cast<TileA*>(base + Cfg::kGeo.smem.a)),
        b(reinterpret_cast<TileB*>(base + Cfg::kGeo.smem.b)),
        slabs(reinterpret_cast<Slabs*>(base + Cfg::kGeo.smem.slabs)),
        full(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.full)),
        empty(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.empty)),
        bias(base + Cfg::kGeo.smem.bias),
        c_full(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.c_full)),
        c_empty(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.c_empty)),
        bias_full(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.bias_full)),
        bias_empty(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.bias_empty)),
        tile_full(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.tile_full)),
        tile_empty(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.tile_empty)),
        tile_slot(reinterpret_cast<TileInfo*>(base + Cfg::kGeo.smem.tile_slot)),
        unit_full(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.unit_full)),
        unit_empty(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.unit_empty)),
        unit_slot(reinterpret_cast<uint32_t*>(base + Cfg::kGeo.smem.unit_slot)),
        k_tail(reinterpret_cast<uint32_t*>(base + Cfg::kGeo.smem.k_tail)),
        k_tail_ready(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.k_tail_ready)),
        k_tail_cleared(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.k_tail_cleared)),
        reduce(reinterpret_cast<float*>(base + Cfg::kGeo.smem.reduce)),
        reduce_full(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.reduce_full)),
        reduce_empty(reinterpret_cast<uint64_t*>(base + Cfg::kGeo.smem.reduce_empty)) {}
};

}  // namespace tilecast
