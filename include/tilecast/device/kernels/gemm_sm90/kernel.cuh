// The persistent, warp-specialized SM90 BF16 GEMM: D = A * B^T (+ C).
//
// Warpgroup 0 is the producer (one thread issues all TMA loads), warpgroups 1.. are consumers
// (wgmma and the epilogue). Every CTA of a cluster walks the same schedule; per tile and operand
// the scheduler says which CTAs share the tile and who issues its multicast load.
#pragma once

#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/consumer.cuh"
#include "tilecast/device/kernels/gemm_sm90/producer.cuh"

namespace tilecast {

// No CTA leaves while a peer may still arrive on its barriers or write its unit slots.
TC_DEVICE TC_FORCEINLINE void leave_cluster() {
  __syncwarp();  // the producer's lane 0 comes late: arrive as one warp
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait();
}

// The JIT instantiates this with a generated traits struct of named fields (spec.cuh, spec_of).
template <class Traits>
__global__ void __launch_bounds__(gemm_geometry(spec_of<Traits>()).threads, 1)
    gemm_sm90_kernel(const __grid_constant__ TmaDescriptor tma_a, const __grid_constant__ TmaDescriptor tma_b,
                     const __grid_constant__ TmaDescriptor tma_d, const __grid_constant__ TmaDescriptor tma_d_narrow,
                     const __grid_constant__ GemmParams params) {
  using Cfg = GemmSm90Config<Traits>;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t raw_smem[];
  const GemmSm90Smem<Cfg> smem(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw_smem) + kSwizzleAtomBytes - 1) &
                                                         ~uintptr_t{kSwizzleAtomBytes - 1}));
  const uint32_t rank = cuda::ptx::get_sreg_cluster_ctarank();
  const uint32_t cluster_id = cuda::ptx::get_sreg_clusterid_x();
  const uint32_t warpgroup = threadIdx.x / 128;

  // The descriptors' first fetch overlaps the barrier setup instead of the first loads and stores.
  if (threadIdx.x == 32) {
    ptx::prefetch_tensormap(&tma_a);
    ptx::prefetch_tensormap(&tma_b);
    ptx::prefetch_tensormap(&tma_d);
    if constexpr (Cfg::kNarrowSlabCols != 0) ptx::prefetch_tensormap(&tma_d_narrow);
  }
  if (threadIdx.x == 0) {
    operand_ring(smem, params).init();
    unit_ring(smem, params).init();
    // Peers arrive on these barriers and multicast into them: make the inits visible cluster-wide.
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait();
  __syncwarp();  // setmaxnreg and wgmma are .aligned: start every warp converged

  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<Cfg::kProducerRegisters>();
    if (threadIdx.x == 0) {
      run_producer<Cfg>(smem, tma_a, tma_b, params, cluster_id, rank);
    } else if constexpr (Cfg::kGemmType != GemmType::kNormal && Cfg::kGemmType != GemmType::kBatched) {
      // Warp 1 checks the group data (layout_fault.cuh); in k-grouped kernels warps 1-3 then clear
      // the columns past each k-group's end (k_tail.cuh).
      if (threadIdx.x / 32 == 1)
        check_group_data<Cfg::kGemmType>(kernel_problem<Cfg>(params), params.layout_fault, threadIdx.x % 32);
      if constexpr (Cfg::kGemmType == GemmType::kKGroupedContiguous) {
        if (threadIdx.x >= kTailClearerFirstThread) run_k_tail_clearers<Cfg>(smem);
      }
    }
  } else {
    ptx::setmaxnreg_inc<Cfg::kConsumerRegisters>();
    run_consumer<Cfg>(smem, tma_d, tma_d_narrow, params, cluster_id, rank, warpgroup - 1);
  }
  // One call site for every thread: a cluster barrier reached from two places is a divergent
  // barrier to compute-sanitizer's synccheck.
  leave_cluster();
#else
  // Built for another target: wgmma, setmaxnreg and multicast exist only on sm_90a.
  __trap();
#endif
}

}  // namespace tilecast
