// A consumer warpgroup: takes each step's work from the tile ring (the producer walks the
// schedule), waits for each stage, runs the wgmma's for its rows, releases the stage on every CTA
// of the cluster, and stores its part of the tile.
#pragma once

#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/epilogue.cuh"
#include "tilecast/device/kernels/gemm_sm90/epilogue_cluster_split.cuh"
#include "tilecast/device/kernels/gemm_sm90/epilogue_fused_split.cuh"
#include "tilecast/device/kernels/gemm_sm90/epilogue_swapped.cuh"
#include "tilecast/device/kernels/gemm_sm90/k_tail.cuh"
#include "tilecast/device/kernels/gemm_sm90/producer.cuh"
#include "tilecast/device/kernels/gemm_sm90/timeline.cuh"
#include "tilecast/device/kernels/gemm_sm90/wgmma_desc.cuh"
#include "tilecast/device/ptx/instructions.cuh"
#include "tilecast/device/ptx/wgmma_bf16.cuh"

namespace tilecast {

// The epilogue a kernel stores with: the slab and TMA one, the swapped kernel's transposing one,
// the fused split-K one whose last slice reduces the tile, or the one that reduces the slices
// across the cluster.
template <typename Cfg>
using EpilogueOf = pick_type<
    Cfg::kSwapAB, SwappedEpilogue<Cfg>,
    pick_type<Cfg::kFusedReduce, FusedSplitEpilogue<Cfg>,
              pick_type<Cfg::kClusterReduce, ClusterSplitEpilogue<Cfg>, Epilogue<Cfg>>>>;

// Ping-pong (GemmKernelSpec::pingpong): the two consumer warpgroups take the CTA's tiles in turn
// and run their main loops one after the other, each one's epilogue under the other's main loop.
// The warpgroup of turn t hands over on named barrier kFirstMainloopTurn + t % 2 once it has
// waited for its tile's last round and issued its MMAs; the warpgroup of turn t + 1 waits there
// before its first round. The order also makes it safe to skip the other's rounds: when a
// warpgroup waits for round R, every round before R has been waited for, so stage R % stages'
// full barrier is at most one phase behind, and no later round can land in that stage before
// this warpgroup releases R (the stage's readers are the four warps of its turn: stage_readers).
// The same holds for the bias ring, one slot a valid tile (Epilogue::skip_tile): the tile two
// slots back was stored in an earlier turn, whose warpgroup waited for its bias before the main
// loop of its next turn, which began before this tile's. Each warpgroup's C ring holds the slabs
// of its own tiles only (run_epilogue_loader).
inline constexpr uint32_t kTurnBarrierThreads = 2 * kWarpgroupThreads;  // one warpgroup arrives, one waits
TC_DEVICE TC_FORCEINLINE void pass_turn(uint32_t turn) {
  __syncwarp();
  ptx::barrier_arrive(static_cast<uint32_t>(NamedBarrier::kFirstMainloopTurn) + turn % kPingpongWarpgroups,
                      kTurnBarrierThreads);
}
TC_DEVICE TC_FORCEINLINE void wait_turn(uint32_t turn) {
  __syncwarp();
  ptx::barrier_sync(static_cast<uint32_t>(NamedBarrier::kFirstMainloopTurn) + (turn - 1) % kPingpongWarpgroups,
                    kTurnBarrierThreads);
}
// After `turns` tiles in turns, the warpgroup whose turn would come next: it takes the last
// hand-over (waits for the last tile's pass_turn), so that every arrival on the turn barriers is
// waited for. Warpgroup 0 where no tile was taken.
TC_DEVICE TC_FORCEINLINE bool takes_last_hand_over(uint32_t turns, uint32_t warpgroup) {
  return turns % kPingpongWarpgroups == warpgroup;
}

// One tile: the k-loop and the epilogue. The accumulators live only here, so that no copy of
// them crosses a loop edge while wgmma's are in flight (ptxas would serialize every wgmma). With
// pingpong, `turn` is the tile's turn, handed over once its rounds are passed.
template <typename Cfg>
TC_DEVICE TC_FORCEINLINE void run_tile(const GemmSm90Smem<Cfg>& smem, const StageRing<Cfg::kOperandRing>& ring,
                                       EpilogueOf<Cfg>& epilogue, const TileWork& w, PipelineState<Cfg::kStages>& state,
                                       uint32_t warpgroup, uint32_t lane, const WaitBound& bound, uint32_t turn) {
  using Mma = ptx::WgmmaBF16<Cfg::kWarpgroupN>;
  float acc[Cfg::kAtomsM][Cfg::kWarpgroupN / 2];
  if (w.num_k_steps == 0) {
    // An empty K (a k-group of size 0): D = C, or zeros. No rounds to pass: the turn is over.
    if constexpr (Cfg::kPingpong) pass_turn(turn);
    if (w.valid) {
#pragma unroll
      for (uint32_t a = 0; a < Cfg::kAtomsM; ++a)
#pragma unroll
        for (uint32_t i = 0; i < Cfg::kWarpgroupN / 2; ++i) acc[a][i] = 0.0f;
      epilogue.store(w, acc);
    }
    return;
  }
  if (!w.valid) {
    // A phantom: pass each round and release it, so that the peers' barriers balance.
    for (uint32_t kk = 0; kk < w.num_k_steps; ++kk) {
      ring.wait(state);
      ring.release_by_warp(state.stage, lane);
      state.advance();
    }
    if constexpr (Cfg::kPingpong) pass_turn(turn);
    return;
  }
  uint32_t prev_stage = 0;
  for (uint32_t kk = 0; kk < w.num_k_steps; ++kk) {
    ring.wait(state);
    if (kk == 0) consumer_stamp(Stamp::kFirstStage);
    // Lanes leave the wait loop on different iterations; the wgmma instructions are .aligned and
    // need the whole warp converged.
    __syncwarp();
    if constexpr (Cfg::kGemmType == GemmType::kKGroupedContiguous) {
      // The group's last k-step: its columns past the group's K are the next group's (k_tail.cuh).
      if (kk + 1 == w.num_k_steps) {
        const uint32_t tail_cols = (w.k_end - w.k_begin) % Cfg::kBlockK;
        if (tail_cols != 0) hand_over_k_tail<Cfg>(smem, bound, state.stage, tail_cols);
      }
    }
#pragma unroll
    for (uint32_t a = 0; a < Cfg::kAtomsM; ++a)
#pragma unroll
      for (uint32_t i = 0; i < Cfg::kWarpgroupN / 2; ++i) ptx::fence_register(acc[a][i]);
    ptx::wgmma_fence();
    constexpr OperandTile kA = Cfg::kATile, kB = Cfg::kBTile;
    // Column-split kernels build the descriptors on the uniform datapath, where wgmma reads them:
    // broadcast from lane 0, the stage and the warpgroup are values ptxas knows to be the same on
    // every lane (it does not see that of a counter that follows the ring's waits, nor of
    // threadIdx.x / 128). Otherwise it builds them in vector registers and moves them over before
    // every wgmma: 41 moves among the 12 wgmma of a 192x176 column-split k-step, none this way.
    // Measured on the H200 (four rounds in alternating processes): the column-split rows
    // 0.9-1.0% faster (4097^3, 4104^3, 3000^3), the others within noise (8192^3, 4096^3, 1000^3
    // +-1%, 512^3 -0.6%; bench/results/2026-12-03-h200-l2-lines.md, runs D and E); applied to
    // every kernel it cost one (192x192, three warpgroups, FP32 C and a bias) 8 bytes of spill.
    // So column-split kernels only: the others compile as before.
    const uint32_t stage = Cfg::kSplitColumns ? __shfl_sync(0xffffffffu, state.stage, 0) : state.stage;
    const uint32_t uniform_warpgroup = Cfg::kSplitColumns ? __shfl_sync(0xffffffffu, warpgroup, 0) : warpgroup;
    const uint32_t b_lo = sw128_desc_lo(smem.b[stage] + kB.mn_offset(Cfg::warpgroup_col(uniform_warpgroup)), kB);
#pragma unroll
    for (uint32_t a = 0; a < Cfg::kAtomsM; ++a) {
      const uint32_t a_lo =
          sw128_desc_lo(smem.a[stage] + kA.mn_offset(Cfg::warpgroup_row(uniform_warpgroup) + a * kWgmmaAtomRows), kA);
#pragma unroll
      for (uint32_t k16 = 0; k16 < Cfg::kBlockK / kWgmmaK; ++k16)
        Mma::template mma<kA.mn_major, kB.mn_major>(acc[a], sw128_desc(a_lo + k16 * desc_step_k16(kA), kA),
                                                    sw128_desc(b_lo + k16 * desc_step_k16(kB), kB), (kk | k16) != 0);
    }
    ptx::wgmma_commit_group();
    // The other warpgroup's main loop may start while these MMAs run: the pipe stays fed.
    if constexpr (Cfg::kPingpong)
      if (kk + 1 == w.num_k_steps) pass_turn(turn);
#pragma unroll
    for (uint32_t a = 0; a < Cfg::kAtomsM; ++a)
#pragma unroll
      for (uint32_t i = 0; i < Cfg::kWarpgroupN / 2; ++i) ptx::fence_register(acc[a][i]);
    // Keep this k-step's MMAs in flight; the previous one's are done with their stage.
    ptx::wgmma_wait_group<1>();
    if (kk > 0) ring.release_by_warp(prev_stage, lane);
    prev_stage = state.stage;
    state.advance();
  }
  ptx::wgmma_wait_group<0>();
#pragma unroll
  for (uint32_t a = 0; a < Cfg::kAtomsM; ++a)
#pragma unroll
    for (uint32_t i = 0; i < Cfg::kWarpgroupN / 2; ++i) ptx::fence_register(acc[a][i]);
  ring.release_by_warp(prev_stage, lane);
  consumer_stamp(Stamp::kMainloopDone);
  epilogue.store(w, acc);
  consumer_stamp(Stamp::kTileStored);
}

template <typename Cfg>
TC_DEVICE void run_consumer(const GemmSm90Smem<Cfg>& smem, const TmaDescriptor& tma_d, const TmaDescriptor& tma_d_narrow,
                            const GemmParams& params, uint32_t warpgroup) {
  const uint32_t lane = threadIdx.x % 32;
  const StageRing<Cfg::kOperandRing> ring = operand_ring(smem, params);
  const StageRing<Cfg::kTileRing> tiles = tile_ring(smem, params);
  EpilogueOf<Cfg> epilogue(smem, tma_d, tma_d_narrow, params, warpgroup);
  PipelineState<Cfg::kStages> state = consumer_start_state<Cfg::kStages>();
  PipelineState<Cfg::kTileSlots> tile = consumer_start_state<Cfg::kTileSlots>();
  uint32_t turn = 0;
  for (;;) {
    tiles.wait(tile);
    // Lane 0 reads the slot, hands it to the warp and gives the slot back: the thread that
    // releases it is the only one that read it. (With every lane reading it and __syncwarp before
    // lane 0's release, compute-sanitizer's racecheck reported each reused slot as a race with the
    // producer's next write: it does not take __syncwarp as ordering the other lanes' reads.)
    TileInfo info{};
    if (lane == 0) info = read_tile_info(smem, tile.stage);
    info = broadcast_from_lane0(info);
    if (lane == 0) tiles.release_by_thread(tile.stage);
    tile.advance();
    if (info.flags & kTileEnd) {
      if constexpr (Cfg::kPingpong)
        if (turn > 0 && takes_last_hand_over(turn, warpgroup)) wait_turn(turn);
      break;
    }
    TileWork w;
    w.valid = (info.flags & kTileValid) != 0;
    w.num_k_steps = info.num_k_steps;
    w.group = info.group;
    w.d_group = info.group;
    w.row = info.row;
    w.rows = info.rows;
    w.col = info.col;
    w.cols = info.cols;
    w.k_begin = 0;
    w.k_end = info.k;
    uint32_t this_turn = 0;
    if constexpr (Cfg::kPingpong) {
      this_turn = turn++;
      if (this_turn % kPingpongWarpgroups != warpgroup) {
        // The other warpgroup's tile: its rounds are not this one's to wait for or release, nor
        // its bias (the epilogue loader loads none for a phantom).
        for (uint32_t kk = 0; kk < w.num_k_steps; ++kk) state.advance();
        if (w.valid) epilogue.skip_tile();
        continue;
      }
      if (this_turn > 0) wait_turn(this_turn);
    }
    run_tile<Cfg>(smem, ring, epilogue, w, state, warpgroup, lane, params.wait, this_turn);
  }
  if constexpr (Cfg::kGemmType == GemmType::kKGroupedContiguous) {
    // In turns, the warpgroup that took the last hand-over: every turn's k-tails are handed over
    // by then.
    if (!Cfg::kPingpong || takes_last_hand_over(turn, warpgroup)) release_k_tail_clearers<Cfg>(smem);
  }
  epilogue.drain();
  consumer_stamp(Stamp::kDrained);
}

}  // namespace tilecast
