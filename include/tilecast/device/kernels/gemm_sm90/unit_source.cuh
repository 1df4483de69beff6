// Where a cluster's next unit comes from.
//
// Static: cluster c takes units c, c + clusters, ... Every role computes that itself.
// Dynamic: rank 0's producer thread claims the next unit from a global counter shared with any
// companion launch and writes it into a slot of every CTA of the cluster with st.async, whose
// bytes complete that CTA's unit_full barrier. Every reader (each CTA's producer thread and each
// consumer warp) then arrives on rank 0's unit_empty barrier, so a slot is refilled only once
// the whole cluster has read it. A unit past the end tells everyone to stop.
#pragma once

#include <cuda/atomic>
#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/shared_storage.cuh"
#include "tilecast/device/pipeline/mbarrier.cuh"
#include "tilecast/device/pipeline/pipeline_state.cuh"

namespace tilecast {

template <typename Cfg>
class UnitSource {
 public:
  TC_DEVICE UnitSource(GemmSm90Smem<Cfg>& smem, const GemmParams& params, uint32_t cluster_id, uint32_t rank)
      : smem_(smem), params_(params), rank_(rank), next_static_(cluster_id) {}

  // The next unit for this role. kProducer: the producer thread (rank 0's also claims);
  // otherwise a consumer warp (all its lanes call).
  template <bool kProducer>
  TC_DEVICE uint32_t next() {
    if constexpr (!Cfg::kDynamicUnits) {
      const uint32_t unit = next_static_;
      next_static_ += params_.num_clusters;
      return unit;
    } else {
      const uint32_t slot = state_.stage;
      if constexpr (kProducer) {
        if (rank_ == 0) claim_and_broadcast(slot);
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                             &smem_.unit_full[slot], sizeof(uint32_t));
      }
      mbarrier_wait(&smem_.unit_full[slot], state_.phase, params_.wait, {BarrierId::kUnitFull, slot});
      const uint32_t unit = *static_cast<volatile uint32_t*>(&smem_.unit_slot[slot]);
      if constexpr (!kProducer) __syncwarp();
      if (kProducer || (threadIdx.x % 32) == 0) mbarrier_arrive_cluster(&smem_.unit_empty[slot], 0);
      state_.advance();
      return unit;
    }
  }

  // Rank 0's producer thread, once its cluster has seen the end: counts the cluster as done, and
  // the last cluster of all launches resets the counters for the next GEMM on the stream.
  TC_DEVICE void finish() {
    if constexpr (Cfg::kDynamicUnits) {
      if (rank_ != 0) return;
      cuda::atomic_ref<uint32_t, cuda::thread_scope_device> done(*params_.done_counter);
      // acq_rel: every other cluster's last claim happened before its increment, so once all
      // increments are seen no claim can follow the reset.
      if (done.fetch_add(1, cuda::memory_order_acq_rel) == params_.total_clusters - 1) {
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*params_.unit_counter).store(0, cuda::memory_order_relaxed);
        done.store(0, cuda::memory_order_relaxed);
      }
    }
  }

 private:
  TC_DEVICE void claim_and_broadcast(uint32_t slot) {
    // The slot's previous unit must have been read by every reader of every CTA.
    mbarrier_wait(&smem_.unit_empty[slot], state_.phase ^ 1u, params_.wait, {BarrierId::kUnitEmpty, slot});
    const uint32_t unit =
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*params_.unit_counter).fetch_add(1, cuda::memory_order_relaxed);
    for (uint32_t r = 0; r < Cfg::kClusterSize; ++r) {
      auto* dst = static_cast<uint32_t*>(__cluster_map_shared_rank(static_cast<void*>(&smem_.unit_slot[slot]), r));
      auto* bar = static_cast<uint64_t*>(__cluster_map_shared_rank(static_cast<void*>(&smem_.unit_full[slot]), r));
      cuda::ptx::st_async(dst, unit, bar);
    }
  }

  GemmSm90Smem<Cfg>& smem_;
  const GemmParams& params_;
  uint32_t rank_;
  uint32_t next_static_;
  PipelineState<Cfg::kUnitSlots> state_{};
};

}  // namespace tilecast
