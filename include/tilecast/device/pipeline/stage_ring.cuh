// A ring of shared-memory stages and its full/empty mbarrier pairs, run by the protocol of
// ring_protocol.cuh: init counts, the filler's acquire and tail, the reader's wait and release.
// The GEMM's operand ring and its dynamic-unit ring are two of these.
#pragma once

#include <cuda/ptx>

#include "tilecast/device/pipeline/mbarrier.cuh"
#include "tilecast/device/pipeline/pipeline_state.cuh"
#include "tilecast/device/pipeline/ring_protocol.cuh"

namespace tilecast {

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// Where a ring's waits report a timeout.
struct RingSites {
  BarrierId full, empty, teardown;
};

// The protocol is a template argument so that its counts and masks are compile-time constants in
// the kernel (a protocol passed by reference would be a variable in device memory).
template <RingProtocol kProtocol>
class StageRing {
 public:
  static constexpr uint32_t kStages = kProtocol.stages;

  TC_DEVICE StageRing(uint64_t* full, uint64_t* empty, const WaitBound& bound, RingSites sites)
      : full_(shared_address(full)), empty_(shared_address(empty)), bound_(bound), sites_(sites) {}

  // One thread of the CTA, before the cluster's first barrier (peers arrive on these barriers
  // and multicast into them: the caller then fences the inits cluster-wide).
  TC_DEVICE void init() const {
    for (uint32_t s = 0; s < kStages; ++s) {
      cuda::ptx::mbarrier_init(barrier(full_, s), kProtocol.full_arrivals);
      cuda::ptx::mbarrier_init(barrier(empty_, s), kProtocol.empty_arrivals);
    }
  }

  // The filler: every reader the protocol counts has released the stage (the first pass over the
  // ring passes at once: see producer_start_state).
  TC_DEVICE void acquire(const PipelineState<kStages>& s) const {
    mbarrier_wait(barrier(empty_, s.stage), s.phase, bound_, {sites_.empty, s.stage});
  }

  // The same, but skipped in the filler's first pass over the ring, which `fresh` counts down from
  // kStages: those waits would pass at once (producer_start_state) and each still costs a
  // try_wait. The pipeline model checks, for the operand ring, that every wait skipped so would
  // have passed (the tile ring is CTA-local and the same argument holds for it).
  TC_DEVICE void acquire(const PipelineState<kStages>& s, uint32_t& fresh) const {
    if (fresh != 0) {
      --fresh;
      return;
    }
    acquire(s);
  }

  TC_DEVICE uint64_t* full_barrier(uint32_t stage) const { return barrier(full_, stage); }

  // The filler, after its last fill (S15): the last releases of every peer have landed, so none
  // arrives on this CTA's barriers after it exits.
  TC_DEVICE void tail(PipelineState<kStages>& s) const {
    for (uint32_t i = 0; i < kProtocol.teardown_rounds; ++i) {
      mbarrier_wait(barrier(empty_, s.stage), s.phase, bound_, {sites_.teardown, s.stage});
      s.advance();
    }
  }

  // A reader: the stage holds its data.
  TC_DEVICE void wait(const PipelineState<kStages>& s) const {
    mbarrier_wait(barrier(full_, s.stage), s.phase, bound_, {sites_.full, s.stage});
  }

  // A reader warp done with `stage`, all lanes calling: lane r arrives on rank r's empty barrier
  // for every rank of the release mask (lane 0 on its own CTA's, for a local ring).
  TC_DEVICE void release_by_warp(uint32_t stage, uint32_t lane) const {
    if constexpr (kProtocol.release_mask == 0) {
      if (lane == 0) cuda::ptx::mbarrier_arrive(barrier(empty_, stage));
    } else if (lane < kMaxClusterSize && ((kProtocol.release_mask >> lane) & 1u)) {
      mbarrier_arrive_cluster(barrier(empty_, stage), lane);
    }
  }

  // A lone reader thread done with `stage`: it arrives on every rank of the release mask itself
  // (on its own CTA's barrier for a local ring, release_mask 0).
  TC_DEVICE void release_by_thread(uint32_t stage) const {
    if (kProtocol.release_mask == 0) {
      cuda::ptx::mbarrier_arrive(barrier(empty_, stage));
      return;
    }
    for (uint32_t r = 0; r < kMaxClusterSize; ++r)
      if ((kProtocol.release_mask >> r) & 1u) mbarrier_arrive_cluster(barrier(empty_, stage), r);
  }

 private:
  // The barriers are kept as 32-bit shared-window addresses: generic pointers would hold 64-bit
  // registers in every role that keeps a ring, the epilogue's included.
  static TC_DEVICE TC_FORCEINLINE uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
  }
  static TC_DEVICE TC_FORCEINLINE uint64_t* barrier(uint32_t base, uint32_t stage) {
    return static_cast<uint64_t*>(__cvta_shared_to_generic(base + stage * 8));
  }

  uint32_t full_;
  uint32_t empty_;
  const WaitBound& bound_;
  RingSites sites_;
};

#endif

}  // namespace tilecast
