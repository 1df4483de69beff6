// The producer: one thread that walks the schedule and fills the operand ring with TMA loads,
// multicasting each operand tile to the CTAs the plan names.
#pragma once

#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/coordinates.cuh"
#include "tilecast/device/kernels/gemm_sm90/unit_source.cuh"

namespace tilecast {

template <typename Cfg>
TC_DEVICE StageRing<Cfg::kStages> operand_ring(const GemmSm90Smem<Cfg>& smem, const GemmParams& params) {
  return {smem.full, smem.empty, Cfg::kOperandRing, params.wait,
          {BarrierId::kFull, BarrierId::kEmpty, BarrierId::kEmptyTeardown}};
}

// Loads one operand box into the same stage of every CTA in `mask` (just this CTA when the mask
// names no other), completing bytes on each one's full barrier of that stage.
TC_DEVICE TC_FORCEINLINE void load_box(const TmaDescriptor& desc, void* dst, uint64_t* full, const int32_t (&c)[3],
                                       uint16_t mask, uint32_t rank) {
  if (mask == (1u << rank)) {
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &desc, c, full);
  } else {
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &desc, c, full, mask);
  }
}

template <typename Cfg>
TC_DEVICE void run_producer(const GemmSm90Smem<Cfg>& smem, const TmaDescriptor& tma_a, const TmaDescriptor& tma_b,
                            const GemmParams& params, uint32_t cluster_id, uint32_t rank) {
  TileScheduler scheduler(kernel_problem<Cfg>(params), kernel_schedule<Cfg>(params), rank);
  UnitSource<Cfg> units(smem, params, cluster_id, rank);
  const StageRing<Cfg::kStages> ring = operand_ring(smem, params);
  PipelineState<Cfg::kStages> state = producer_start_state<Cfg::kStages>();
  while (scheduler.seek(units.template next<true>())) {
    for (uint32_t step = 0; step < scheduler.steps_per_unit(); ++step) {
      const TileWork w = scheduler.work(step);
      for (uint32_t kk = 0; kk < w.num_k_steps; ++kk) {
        ring.acquire(state);
        uint64_t* full = ring.full_barrier(state.stage);
        if (w.valid) {
          cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                               full, uint32_t{Cfg::kStageTxBytes});
          int32_t c[3];
          if (w.issue_a) {
            TileCoords<Cfg::kGemmType>::a(w, kk, Cfg::kBlockK, c);
            load_box(tma_a, smem.a[state.stage], full, c, w.a_mask, rank);
          }
          if (w.issue_b) {
            TileCoords<Cfg::kGemmType>::b(w, kk, Cfg::kBlockK, c);
            load_box(tma_b, smem.b[state.stage], full, c, w.b_mask, rank);
          }
        } else {
          // A phantom receives nothing; its consumers still pass the round and release it.
          cuda::ptx::mbarrier_arrive(full);
        }
        state.advance();
      }
    }
  }
  units.finish();
  ring.tail(state);
}

}  // namespace tilecast
