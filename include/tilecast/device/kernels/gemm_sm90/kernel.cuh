// The persistent, warp-specialized SM90 BF16 GEMM: D = A * B^T (+ C).
//
// Warpgroup 0 is the producer (one thread issues the operands' TMA loads; with C or a bias one
// thread of its second warp is the epilogue loader), warpgroups 1.. are consumers (wgmma and the
// epilogue). Every CTA of a cluster walks the same schedule; per tile and operand
// the scheduler says which CTAs share the tile and who issues its multicast load.
#pragma once

#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/consumer.cuh"
#include "tilecast/device/kernels/gemm_sm90/producer.cuh"
#include "tilecast/device/kernels/gemm_sm90/timeline.cuh"

namespace tilecast {

// With dynamic units no CTA leaves while a peer may still write its unit slots.
TC_DEVICE TC_FORCEINLINE void leave_cluster() {
  __syncwarp();  // the producer's elected lane comes late: arrive as one warp
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait();
}

// The thread that initializes the CTA's mbarriers: the first consumer's.
inline constexpr uint32_t kBarrierInitThread = kFirstConsumerThread;
// The thread that prefetches the tiles' first stage into L2: the first consumer's second warp.
inline constexpr uint32_t kPrefetchThread = kBarrierInitThread + 32;

// The JIT instantiates this with a generated traits struct of named fields (spec.cuh, spec_of).
template <class Traits>
__global__ void __launch_bounds__(gemm_geometry(spec_of<Traits>()).threads, 1)
    gemm_sm90_kernel(const __grid_constant__ TmaDescriptor tma_a, const __grid_constant__ TmaDescriptor tma_a_last,
                     const __grid_constant__ TmaDescriptor tma_b,
                     const __grid_constant__ TmaDescriptor tma_d, const __grid_constant__ TmaDescriptor tma_d_narrow,
                     const __grid_constant__ TmaDescriptor tma_c, const __grid_constant__ TmaDescriptor tma_c_narrow,
                     const __grid_constant__ TmaDescriptor tma_bias, const __grid_constant__ GemmParams params) {
  using Cfg = GemmSm90Config<Traits>;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t raw_smem[];
  const GemmSm90Smem<Cfg> smem(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw_smem) + kSwizzleAtomBytes - 1) &
                                                         ~uintptr_t{kSwizzleAtomBytes - 1}));
  const uint32_t warpgroup = threadIdx.x / kWarpgroupThreads;
  stamp_entry();

  // The descriptors' first fetch overlaps the barrier setup instead of the first loads and stores.
  if (threadIdx.x == 32) {
    ptx::prefetch_tensormap(&tma_a);
    if constexpr (a_box_stops_at_m(Cfg::kSpec)) ptx::prefetch_tensormap(&tma_a_last);
    ptx::prefetch_tensormap(&tma_b);
    ptx::prefetch_tensormap(&tma_d);
    if constexpr (Cfg::kNarrowSlabCols != 0) ptx::prefetch_tensormap(&tma_d_narrow);
    if constexpr (Cfg::kLoadsC) ptx::prefetch_tensormap(&tma_c);
    if constexpr (Cfg::kLoadsC && Cfg::kNarrowSlabCols != 0) ptx::prefetch_tensormap(&tma_c_narrow);
    if constexpr (Cfg::kLoadsBias) ptx::prefetch_tensormap(&tma_bias);
  }
  // The first consumer thread sets the barriers up: the consumers have nothing to do until the
  // first stage lands, while warp 0's lanes are the producer's.
  static_assert(Cfg::kThreads > kPrefetchThread, "every kernel has a consumer warpgroup");
  if (threadIdx.x == kBarrierInitThread) {
    operand_ring(smem, params).init();
    unit_ring(smem, params).init();
    tile_ring(smem, params).init();
    if constexpr (Cfg::kLoadsC)
      for (uint32_t wg = 0; wg < Cfg::kConsumerWarpgroups; ++wg) c_ring(smem, params, wg).init();
    if constexpr (Cfg::kLoadsBias) bias_ring(smem, params).init();
    if constexpr (Cfg::kGemmType == GemmType::kKGroupedContiguous) init_k_tail_barriers<Cfg>(smem);
    if constexpr (Cfg::kClusterReduce) {
      // Every consumer warpgroup of every slice arrives once a phase (epilogue_cluster_split.cuh).
      cuda::ptx::mbarrier_init(smem.reduce_full, ClusterSplitEpilogue<Cfg>::kArrivalsPerPhase);
      cuda::ptx::mbarrier_init(smem.reduce_empty, ClusterSplitEpilogue<Cfg>::kArrivalsPerPhase);
    }
    // Peers arrive on these barriers and multicast into them: make the inits visible cluster-wide.
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    stamp(Stamp::kInitsDone);
  }
  // Relaxed: the fence has released the inits, the only writes a peer must see first. (A release
  // arrive costs every thread a GPU-scope memory barrier.)
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
  stamp_by(0, Stamp::kWarp0Arrived);
  // Launched behind the stream's previous kernel programmatically (call.cpp), this CTA may be
  // resident before that kernel has finished: everything above touches only shared memory and the
  // parameters; from here on every thread may read or write global memory (operands, group data,
  // counters, D). Without such a launch this returns at once.
  ptx::griddepcontrol_wait();
  stamp_by(kBarrierInitThread, Stamp::kGridDepDone);
  stamp_by(0, Stamp::kWarp0GridDep);
  // One-wave problems prefetch their tiles' first stage (first_stage_prefetch.cuh). By a consumer
  // warp, which has nothing to do until the first stage lands, and between arrive and wait, so
  // that no one waits for it. (From the producer's warpgroup, before the arrive, it delayed the
  // first load by 600 cycles.)
  if (threadIdx.x == kPrefetchThread) prefetch_first_stage<Cfg>(tma_a, tma_a_last, tma_b, params);
  cuda::ptx::barrier_cluster_wait();
  stamp_by(kBarrierInitThread, Stamp::kClusterReady);
  stamp_by(0, Stamp::kWarp0Ready);
  // A grid of this call's own launched behind this one (the split-K reduce, the companion) may
  // take the SMs this grid leaves idle now, instead of being launched after it
  // (ptx/instructions.cuh). Other kernels let the next grid on the stream (the caller's next
  // GEMM) launch only as their CTAs exit: with the trigger here in every kernel (the next GEMM's
  // CTAs free to wait on the idle SMs from the start), chains of 8 calls of 128x2112x7168 and
  // 128x7168x16384 (88 and 112 CTAs) ran 10% and 5% slower than with it at exit
  // (bench/results/2026-12-03-h200-sweep-pdl.md).
  if constexpr (launches_own_dependent(Cfg::kSpec)) ptx::griddepcontrol_launch_dependents();
  __syncwarp();  // setmaxnreg and wgmma are .aligned: start every warp converged

  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<Cfg::kProducerRegisters>();
    stamp_by(0, Stamp::kWarp0Regs);
    if (threadIdx.x / 32 == 0) {
      // One lane of warp 0, elected rather than tested by index, so that its TMA loads issue
      // without a waterfall loop around each (ptx::elect_one_sync): 64x64 tiles 3% faster in 1x1
      // and 6% in 2x1 on 128x4096x7168, other tiles unchanged (bench/results/2026-12-02-h200-producer.md).
      if (ptx::elect_one_sync()) {
        // Read here, not before setmaxnreg: ptxas spills a value that lives across it (the unit
        // counter derived from the cluster id was, in every kernel, at any register budget).
        run_producer<Cfg>(smem, tma_a, tma_a_last, tma_b, params, cuda::ptx::get_sreg_clusterid_x(),
                          cuda::ptx::get_sreg_cluster_ctarank());
      }
    } else if (threadIdx.x / 32 == 1) {
      // Warp 1: in grouped kernels it first checks the group data (layout_fault.cuh); with C or a
      // bias one elected lane then is the epilogue loader.
      if constexpr (Cfg::kGemmType != GemmType::kNormal && Cfg::kGemmType != GemmType::kBatched)
        check_group_data<Cfg::kGemmType>(kernel_problem<Cfg>(params), params.layout_fault, threadIdx.x % 32);
      if constexpr (Cfg::kEpilogueLoader)
        if (ptx::elect_one_sync()) run_epilogue_loader<Cfg>(smem, tma_c, tma_c_narrow, tma_bias, params);
    } else if constexpr (Cfg::kGemmType == GemmType::kKGroupedContiguous) {
      // Warps 2-3 of k-grouped kernels clear the columns past each k-group's end (k_tail.cuh).
      if (threadIdx.x >= kTailClearerFirstThread) run_k_tail_clearers<Cfg>(smem, params.wait);
    }
  } else {
    ptx::setmaxnreg_inc<Cfg::kConsumerRegisters>();
    run_consumer<Cfg>(smem, tma_d, tma_d_narrow, params, warpgroup - 1);
  }
  // With dynamic units a peer may still write this CTA's unit slots (unit_source.cuh). Static
  // units need no barrier here: every multicast into this CTA completed before its consumers read
  // the stage, and its producer's teardown waited for every peer's last release (ring_protocol.cuh).
  // (Measured on the H200: 1000^3 in clusters of 2 4.8% faster without it.) One call site for
  // every thread: a cluster barrier reached from two places is a divergent barrier to
  // compute-sanitizer's synccheck.
  if constexpr (Cfg::kDynamicUnits) {
    leave_cluster();
    // A companion grid runs programmatically behind the main one (call.cpp) and must not complete
    // before it: whatever follows on the stream may read the main grid's tiles. (In the main grid
    // this returns at once: it waited for its own predecessor at the start.)
    ptx::griddepcontrol_wait();
  }
  print_timeline();
#else
  // Built for another target: wgmma, setmaxnreg and multicast exist only on sm_90a.
  __trap();
#endif
}

}  // namespace tilecast
