// The producer: one thread that walks the schedule and fills the operand ring with TMA loads,
// multicasting each operand tile to the CTAs the plan names.
#pragma once

#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/coordinates.cuh"
#include "tilecast/device/kernels/gemm_sm90/first_stage_prefetch.cuh"
#include "tilecast/device/kernels/gemm_sm90/timeline.cuh"
#include "tilecast/device/kernels/gemm_sm90/unit_source.cuh"
#include "tilecast/device/ptx/instructions.cuh"

namespace tilecast {

template <typename Cfg>
TC_DEVICE StageRing<Cfg::kOperandRing> operand_ring(const GemmSm90Smem<Cfg>& smem, const GemmParams& params) {
  return {smem.full, smem.empty, params.wait, {BarrierId::kFull, BarrierId::kEmpty, BarrierId::kEmptyTeardown}};
}

// The tile ring: the producer publishes each step's work there for its consumers.
template <typename Cfg>
TC_DEVICE StageRing<Cfg::kTileRing> tile_ring(const GemmSm90Smem<Cfg>& smem, const GemmParams& params) {
  return {smem.tile_full, smem.tile_empty, params.wait, {BarrierId::kTileFull, BarrierId::kTileEmpty, BarrierId::kTileEmpty}};
}

// The slot must have been acquired (tiles.acquire) first. (32-bit shared stores: the producer
// lives in 56 registers.)
template <typename Cfg>
TC_DEVICE TC_FORCEINLINE void publish(const GemmSm90Smem<Cfg>& smem, const StageRing<Cfg::kTileRing>& tiles,
                                      PipelineState<Cfg::kTileSlots>& state, const TileInfo& info) {
  const uint32_t slot = static_cast<uint32_t>(__cvta_generic_to_shared(&smem.tile_slot[state.stage]));
  ptx::st_shared_v4_b32(slot, info.flags, info.num_k_steps, info.group, info.row);
  ptx::st_shared_v4_b32(slot + 16, info.rows, info.col, info.cols, info.k);
  // The arrive releases (at CTA scope) the slot's stores to the consumers that wait on it.
  cuda::ptx::mbarrier_arrive(tiles.full_barrier(state.stage));
  state.advance();
}

// A slot's work, as the consumers and the epilogue loader read it.
template <typename Cfg>
TC_DEVICE TC_FORCEINLINE TileInfo read_tile_info(const GemmSm90Smem<Cfg>& smem, uint32_t stage) {
  const uint32_t slot = static_cast<uint32_t>(__cvta_generic_to_shared(&smem.tile_slot[stage]));
  TileInfo t;
  ptx::ld_shared_v4_b32(slot, t.flags, t.num_k_steps, t.group, t.row);
  ptx::ld_shared_v4_b32(slot + 16, t.rows, t.col, t.cols, t.k);
  return t;
}

// Lane 0's copy of a slot's work, in every lane of the warp (all lanes calling).
TC_DEVICE TC_FORCEINLINE TileInfo broadcast_from_lane0(const TileInfo& t) {
  constexpr uint32_t kAll = 0xffffffffu;
  return {__shfl_sync(kAll, t.flags, 0), __shfl_sync(kAll, t.num_k_steps, 0), __shfl_sync(kAll, t.group, 0),
          __shfl_sync(kAll, t.row, 0),   __shfl_sync(kAll, t.rows, 0),        __shfl_sync(kAll, t.col, 0),
          __shfl_sync(kAll, t.cols, 0),  __shfl_sync(kAll, t.k, 0)};
}

template <typename Cfg>
TC_DEVICE TC_FORCEINLINE TileInfo tile_info(const TileWork& w) {
  return {w.valid ? kTileValid : 0u, w.num_k_steps, slot_group(Cfg::kGemmType, w), w.row, w.rows, w.col, w.cols, w.k_end - w.k_begin};
}

// Loads one operand box into the same stage of every CTA in `mask` (just this CTA when the mask
// names no other), completing bytes on each one's full barrier of that stage. `kAlone`: a cluster
// of one, whose mask is always itself (no compare per load in the producer's k-loop).
template <bool kAlone>
TC_DEVICE TC_FORCEINLINE void load_box(const TmaDescriptor& desc, void* dst, uint64_t* full, const int32_t (&c)[3],
                                       uint16_t mask, uint32_t rank) {
  if (kAlone || mask == (1u << rank)) {
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &desc, c, full);
  } else {
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &desc, c, full, mask);
  }
}

// Whether the tile at `row` takes A's box for the last row of tiles, which stops at M
// (a_box_stops_at_m, geometry.cuh): it does where it has fewer than block_m rows. M comes from the
// kernel's parameters (constant memory), so the producer keeps no register for it.
template <typename Cfg>
TC_DEVICE TC_FORCEINLINE bool takes_last_a_box(uint32_t m, uint32_t row) {
  return a_box_stops_at_m(Cfg::kSpec) && m - row < Cfg::kBlockM;
}

// This CTA's share of the first stage of a one-wave problem's tiles (split-K: of every tile's
// slices), prefetched into L2 (first_stage_prefetch.cuh); nothing in grouped kernels. A companion
// launch judges the wave by its own grid: with the main launch's it may prefetch some boxes twice,
// which costs an L2 hit each.
template <typename Cfg>
TC_DEVICE void prefetch_first_stage(const TmaDescriptor& tma_a, const TmaDescriptor& tma_a_last,
                                    const TmaDescriptor& tma_b, const GemmParams& params) {
  constexpr bool kDenseOrBatched = Cfg::kGemmType == GemmType::kNormal || Cfg::kGemmType == GemmType::kBatched;
  if constexpr (!kDenseOrBatched) return;
  const GemmProblem p = kernel_problem<Cfg>(params);
  const uint32_t groups = Cfg::kGemmType == GemmType::kBatched ? p.num_groups : 1u;
  const uint32_t a_groups = a_per_group(Cfg::kGemmType) ? groups : 1u;
  const uint32_t b_groups = b_per_group(Cfg::kGemmType) ? groups : 1u;
  const uint32_t slices = Cfg::kSplitK ? p.k_splits : 1u;
  const FirstStagePrefetch plan = FirstStagePrefetch::plan(ceil_div(p.m, Cfg::kBlockM), ceil_div(p.n, Cfg::kBlockN),
                                                           groups, a_groups, b_groups, gridDim.x, slices);
  for (uint32_t i = blockIdx.x; i < plan.tiles; i += gridDim.x) {
    const PrefetchTile t = plan.tile(i);
    TileWork w;  // the coordinates' view of the tile: its origin, group and first K column
    w.row = t.block * Cfg::kBlockM;
    w.col = t.block * Cfg::kBlockN;
    w.group = t.group;
    if (slices > 1) {
      const KSlice slice = split_k_slice(p.k, p.k_splits, Cfg::kBlockK, t.slice);
      if (slice.size == 0) continue;  // an empty trailing slice reads nothing
      w.k_begin = slice.begin;
    }
    int32_t c[3];
    if (t.is_a) {
      const TmaDescriptor* a = takes_last_a_box<Cfg>(p.m, w.row) ? &tma_a_last : &tma_a;
#pragma unroll
      for (uint32_t box = 0; box < Cfg::kATile.boxes; ++box) {
        TileCoords<Cfg::kGemmType>::a(w, 0, Cfg::kBlockK, a_mn_major(Cfg::kLayout), box, c);
        ptx::prefetch_tensor_3d(a, c);
      }
    } else {
#pragma unroll
      for (uint32_t box = 0; box < Cfg::kBTile.boxes; ++box) {
        TileCoords<Cfg::kGemmType>::b(w, 0, Cfg::kBlockK, b_mn_major(Cfg::kLayout), box, c);
        ptx::prefetch_tensor_3d(&tma_b, c);
      }
    }
  }
}

template <typename Cfg>
TC_DEVICE void run_producer(const GemmSm90Smem<Cfg>& smem, const TmaDescriptor& tma_a, const TmaDescriptor& tma_a_last,
                            const TmaDescriptor& tma_b, const GemmParams& params, uint32_t cluster_id, uint32_t rank) {
  constexpr bool kAlone = Cfg::kClusterSize == 1;  // every load is this CTA's own (load_box)
  stamp(Stamp::kProducerIn);
  // Serpentine K: a wave is the launch's clusters, each a unit a round (static: UnitSource). Off, a
  // constant 0, so that the scheduler's wave arithmetic folds away.
  TileScheduler scheduler(kernel_problem<Cfg>(params), kernel_schedule<Cfg>(params), rank,
                          Cfg::kKSerpentine ? params.num_clusters : 0u);
  UnitSource<Cfg> units(smem, params, cluster_id, rank);
  const StageRing<Cfg::kOperandRing> ring = operand_ring(smem, params);
  const StageRing<Cfg::kTileRing> tiles = tile_ring(smem, params);
  PipelineState<Cfg::kStages> state = producer_start_state<Cfg::kStages>();
  PipelineState<Cfg::kTileSlots> tile = producer_start_state<Cfg::kTileSlots>();
  stamp(Stamp::kSchedulerBuilt);
  // Both rings' first passes skip their waits (StageRing::acquire): 512^3 1.3% and 256^3 b32
  // 1.8% faster, large problems unchanged (bench/results/2026-12-02-h200-final-suites.md).
  uint32_t fresh_stages = Cfg::kStages, fresh_slots = Cfg::kTileSlots;
  bool first_load = false, first_seek = false;  // stamped (timeline.cuh)
  while (scheduler.seek(units.next())) {
    stamp_once(Stamp::kFirstSeek, first_seek);
    for (uint32_t step = 0; step < scheduler.steps_per_unit(); ++step) {
      // The slot first, before the step's work is live: a wait beside the TileWork costs the
      // producer more registers than its 56 (batched 4x1 clusters spilled).
      tiles.acquire(tile, fresh_slots);
      stamp_first(Stamp::kFirstSlot, first_load);
      const TileWork w = scheduler.work(step);
      stamp_first(Stamp::kFirstWork, first_load);
      publish(smem, tiles, tile, tile_info<Cfg>(w));
      // The last row of tiles loads only the rows it has: fewer bytes land.
      const bool a_last = takes_last_a_box<Cfg>(kernel_problem<Cfg>(params).m, w.row);
      const uint32_t stage_tx = a_last ? params.a_last_stage_tx_bytes : uint32_t{Cfg::kStageTxBytes};
      for (uint32_t kk = 0; kk < w.num_k_steps; ++kk) {
        // Serpentine K: odd waves load their k-blocks last to first (spec.cuh).
        const uint32_t k_block = Cfg::kKSerpentine ? w.k_step(kk) : kk;
        ring.acquire(state, fresh_stages);
        stamp_first(Stamp::kFirstStageFree, first_load);
        uint64_t* full = ring.full_barrier(state.stage);
        if (w.valid) {
          cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                               full, stage_tx);
          int32_t c[3];
          stamp_once(Stamp::kFirstLoad, first_load);
          if (kk == 0) print_tile_start(w);
          if (w.issue_a) {
#pragma unroll
            for (uint32_t box = 0; box < Cfg::kATile.boxes; ++box) {
              TileCoords<Cfg::kGemmType>::a(w, k_block, Cfg::kBlockK, a_mn_major(Cfg::kLayout), box, c);
              load_box<kAlone>(a_last ? tma_a_last : tma_a, smem.a[state.stage] + box * Cfg::kATile.box_bytes, full, c,
                               w.a_mask, rank);
            }
          }
          if (w.issue_b) {
#pragma unroll
            for (uint32_t box = 0; box < Cfg::kBTile.boxes; ++box) {
              TileCoords<Cfg::kGemmType>::b(w, k_block, Cfg::kBlockK, b_mn_major(Cfg::kLayout), box, c);
              load_box<kAlone>(tma_b, smem.b[state.stage] + box * Cfg::kBTile.box_bytes, full, c, w.b_mask, rank);
            }
          }
        } else {
          // A phantom receives nothing; its consumers still pass the round and release it.
          cuda::ptx::mbarrier_arrive(full);
        }
        state.advance();
      }
    }
  }
  tiles.acquire(tile, fresh_slots);
  publish(smem, tiles, tile, TileInfo{kTileEnd, 0, 0, 0, 0, 0, 0, 0});
  units.finish();
  ring.tail(state);
  stamp(Stamp::kTailDone);
}

}  // namespace tilecast
