// The epilogue loader: one thread (lane 0 of the producer warpgroup's second warp) that takes each
// step's work from the tile ring, as the consumers do, and for every tile this CTA computes loads
// by TMA the bias tile of the tile's columns and the C slabs, each into the slab buffer of the
// consumer warpgroup that will store that slab (with kPingpong, the one whose turn the tile is),
// in the order the epilogue consumes them. It runs ahead as far as the rings let it, so the loads
// overlap the tile's main loop instead of following it.
#pragma once

#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/coordinates.cuh"
#include "tilecast/device/kernels/gemm_sm90/producer.cuh"

namespace tilecast {

// Consumer warpgroup `warpgroup`'s C ring: its slab buffers.
template <typename Cfg>
TC_DEVICE StageRing<Cfg::kCRing> c_ring(const GemmSm90Smem<Cfg>& smem, const GemmParams& params, uint32_t warpgroup) {
  return {smem.c_full + warpgroup * Cfg::kSlabBuffers, smem.c_empty + warpgroup * Cfg::kSlabBuffers, params.wait,
          {BarrierId::kCFull, BarrierId::kCEmpty, BarrierId::kCEmpty}};
}

template <typename Cfg>
TC_DEVICE StageRing<Cfg::kBiasRing> bias_ring(const GemmSm90Smem<Cfg>& smem, const GemmParams& params) {
  return {smem.bias_full, smem.bias_empty, params.wait, {BarrierId::kBiasFull, BarrierId::kBiasEmpty, BarrierId::kBiasEmpty}};
}

// Loads one box into this CTA's shared memory, completing its bytes on `full`.
TC_DEVICE TC_FORCEINLINE void load_local_box(const TmaDescriptor& desc, void* dst, uint64_t* full, const int32_t (&c)[3],
                                             uint32_t bytes) {
  cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, full,
                                       bytes);
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &desc, c, full);
}

template <typename Cfg>
TC_DEVICE void run_epilogue_loader(const GemmSm90Smem<Cfg>& smem, const TmaDescriptor& tma_c,
                                   const TmaDescriptor& tma_c_narrow, const TmaDescriptor& tma_bias,
                                   const GemmParams& params) {
  const StageRing<Cfg::kTileRing> tiles = tile_ring(smem, params);
  PipelineState<Cfg::kTileSlots> tile = consumer_start_state<Cfg::kTileSlots>();
  const StageRing<Cfg::kBiasRing> biases = bias_ring(smem, params);
  PipelineState<Cfg::kBiasSlots> bias_state = producer_start_state<Cfg::kBiasSlots>();
  PipelineState<Cfg::kSlabBuffers> c_state[Cfg::kConsumerWarpgroups];
#pragma unroll
  for (uint32_t wg = 0; wg < Cfg::kConsumerWarpgroups; ++wg) c_state[wg] = producer_start_state<Cfg::kSlabBuffers>();
  constexpr uint32_t kNarrowBytes = Cfg::kGeo.c_narrow_box.cols * Cfg::kGeo.c_narrow_box.rows * (Cfg::kOutputFP32 ? 4 : 2);
  // With kPingpong, the consumer warpgroup that stores the tile: the turns count every tile,
  // phantoms too, as the consumers do (run_consumer).
  uint32_t turn_warpgroup = 0;

  for (;;) {
    tiles.wait(tile);
    const TileInfo info = read_tile_info(smem, tile.stage);
    tiles.release_by_thread(tile.stage);
    tile.advance();
    if (info.flags & kTileEnd) break;
    const uint32_t storer = turn_warpgroup;
    if constexpr (Cfg::kPingpong) turn_warpgroup = (turn_warpgroup + 1) % kPingpongWarpgroups;
    if (!(info.flags & kTileValid)) continue;  // a phantom has no epilogue
    TileWork w;
    w.group = info.group;
    w.d_group = info.group;
    w.row = info.row;
    w.rows = info.rows;
    w.col = info.col;
    w.cols = info.cols;
    if constexpr (Cfg::kHasBias) {
      biases.acquire(bias_state);
      const int32_t c[3] = {static_cast<int32_t>(w.col), 0, 0};
      load_local_box(tma_bias, smem.bias + bias_state.stage * Cfg::kGeo.bias_tile_bytes,
                     biases.full_barrier(bias_state.stage), c, Cfg::kGeo.bias_box.cols * (Cfg::kBiasFP32 ? 4 : 2));
      bias_state.advance();
    }
    if constexpr (Cfg::kHasC) {
      // The epilogue's order (Epilogue::store), with the warpgroups interleaved so that both get
      // their slabs at the same pace. The warpgroup loop is unrolled so that c_state stays in
      // registers; the others are not, for the 56 registers of the producer warpgroup.
#pragma unroll 1
      for (uint32_t a = 0; a < Cfg::kAtomsM; ++a)
#pragma unroll 1
        for (uint32_t slab = 0; slab < Cfg::kSlabs; ++slab) {
          const uint32_t slab_col = slab * Cfg::kSlabCols;  // of a warpgroup's columns
          if (slab_col >= w.cols) continue;
          const bool narrow = slab_col + Cfg::kSlabCols > Cfg::kWarpgroupN;
#pragma unroll
          for (uint32_t wg = 0; wg < Cfg::kConsumerWarpgroups; ++wg) {
            // An atom with none of the tile's rows and a slab with none of its columns have no
            // epilogue (Epilogue::store skips them too). (Without split columns the second test is
            // the one above: written this way the loader compiles as it did before them, in its
            // 56 registers.)
            if (Cfg::warpgroup_row(wg) + a * 64 >= w.rows) continue;
            if (Cfg::warpgroup_col(wg) + slab_col >= w.cols) continue;
            if (Cfg::kPingpong && wg != storer) continue;  // a whole tile, the other warpgroup's
            const StageRing<Cfg::kCRing> ring = c_ring(smem, params, wg);
            PipelineState<Cfg::kSlabBuffers>& st = c_state[wg];
            ring.acquire(st);
            int32_t c[3];
            TileCoords<Cfg::kGemmType>::d(w, Cfg::warpgroup_row(wg) + a * 64, Cfg::warpgroup_col(wg) + slab_col, c);
            load_local_box(narrow ? tma_c_narrow : tma_c, smem.slabs[wg][st.stage], ring.full_barrier(st.stage), c,
                           narrow ? kNarrowBytes : Cfg::kSlabBytes);
            st.advance();
          }
        }
    }
  }
}

}  // namespace tilecast
