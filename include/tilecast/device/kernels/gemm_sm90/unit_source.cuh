// Where a cluster's next unit comes from.
//
// Static: cluster c takes units c, c + clusters, ... Every role computes that itself.
// Dynamic: rank 0's producer thread claims the next unit from a global counter shared with any
// companion launch and writes it into a slot of every CTA of the cluster with st.async, whose
// bytes complete that CTA's unit_full barrier. Every CTA's producer thread then releases the
// slot on rank 0 (unit_ring_protocol), so a slot is refilled only once the whole cluster has read
// it. (The consumers and the epilogue loader take their work from the producer: tile ring.) A unit past the end tells everyone to stop.
//
// The counters go through the compiler's __nv_atomic builtins (the memory orders of
// cuda::atomic_ref, as single atom / st instructions) rather than cuda::atomic_ref itself:
// <cuda/atomic> cost NVRTC 1.1 s of parsing per kernel (bench/results/2026-12-01-nvrtc-pch.md).
#pragma once

#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/smem.cuh"
#include "tilecast/device/pipeline/stage_ring.cuh"

namespace tilecast {

template <typename Cfg>
TC_DEVICE StageRing<Cfg::kUnitRing> unit_ring(const GemmSm90Smem<Cfg>& smem, const GemmParams& params) {
  return {smem.unit_full, smem.unit_empty, params.wait, {BarrierId::kUnitFull, BarrierId::kUnitEmpty, BarrierId::kUnitEmpty}};
}

template <typename Cfg>
class UnitSource {
 public:
  TC_DEVICE UnitSource(const GemmSm90Smem<Cfg>& smem, const GemmParams& params, uint32_t cluster_id, uint32_t rank)
      : smem_(smem), params_(params), ring_(unit_ring(smem, params)), rank_(rank), next_static_(cluster_id) {}

  // The next unit, for the producer thread (rank 0's also claims). The consumers and the epilogue
  // loader take their work from the producer through the tile ring.
  TC_DEVICE uint32_t next() {
    if constexpr (!Cfg::kDynamicUnits) {
      const uint32_t unit = next_static_;
      next_static_ += params_.num_clusters;
      return unit;
    } else {
      const uint32_t slot = read_.stage;
      if (rank_ == 0) claim_and_broadcast();
      cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                           ring_.full_barrier(slot), sizeof(uint32_t));
      ring_.wait(read_);
      const uint32_t unit = *static_cast<volatile uint32_t*>(&smem_.unit_slot[slot]);
      ring_.release_by_thread(slot);
      read_.advance();
      return unit;
    }
  }

  // Rank 0's producer thread, once its cluster has seen the end: counts the cluster as done, and
  // the last cluster of all launches resets the counters for the next GEMM.
  TC_DEVICE void finish() {
    if constexpr (Cfg::kDynamicUnits) {
      if (rank_ != 0) return;
      // acq_rel: every other cluster's last claim happened before its increment, so once all
      // increments are seen no claim can follow the reset.
      if (__nv_atomic_fetch_add(params_.done_counter, 1u, __NV_ATOMIC_ACQ_REL, __NV_THREAD_SCOPE_DEVICE) ==
          params_.total_clusters - 1) {
        __nv_atomic_store_n(params_.unit_counter, 0u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
        __nv_atomic_store_n(params_.done_counter, 0u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
      }
    }
  }

 private:
  // Rank 0's producer: the slot's previous unit has been read by every reader of every CTA. It
  // fills each slot just before it reads it, so its filling position is its reading position
  // with the producer's opposite start parity (no second state to keep in its 56 registers).
  TC_DEVICE void claim_and_broadcast() {
    const uint32_t slot = read_.stage;
    ring_.acquire(PipelineState<Cfg::kUnitSlots>{slot, read_.phase ^ 1u});
    const uint32_t unit =
        __nv_atomic_fetch_add(params_.unit_counter, 1u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    for (uint32_t r = 0; r < Cfg::kClusterSize; ++r) {
      auto* dst = static_cast<uint32_t*>(__cluster_map_shared_rank(static_cast<void*>(&smem_.unit_slot[slot]), r));
      auto* bar = static_cast<uint64_t*>(__cluster_map_shared_rank(static_cast<void*>(ring_.full_barrier(slot)), r));
      cuda::ptx::st_async(dst, unit, bar);
    }
  }

  const GemmSm90Smem<Cfg>& smem_;
  const GemmParams& params_;
  StageRing<Cfg::kUnitRing> ring_;
  uint32_t rank_;
  uint32_t next_static_;
  PipelineState<Cfg::kUnitSlots> read_ = consumer_start_state<Cfg::kUnitSlots>();
};

}  // namespace tilecast
