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

template <uint32_t kStages>
class StageRing {
 public:
  TC_DEVICE StageRing(uint64_t* full, uint64_t* empty, const RingProtocol& protocol, const WaitBound& bound,
                      RingSites sites)
      : full_(full), empty_(empty), protocol_(protocol), bound_(bound), sites_(sites) {}

  // One thread of the CTA, before the cluster's first barrier (peers arrive on these barriers
  // and multicast into them: the caller then fences the inits cluster-wide).
  TC_DEVICE void init() const {
    for (uint32_t s = 0; s < kStages; ++s) {
      cuda::ptx::mbarrier_init(&full_[s], protocol_.full_arrivals);
      cuda::ptx::mbarrier_init(&empty_[s], protocol_.empty_arrivals);
    }
  }

  // The filler: every reader the protocol counts has released the stage (the first pass over the
  // ring passes at once: see producer_start_state).
  TC_DEVICE void acquire(const PipelineState<kStages>& s) const {
    mbarrier_wait(&empty_[s.stage], s.phase, bound_, {sites_.empty, s.stage});
  }

  TC_DEVICE uint64_t* full_barrier(uint32_t stage) const { return &full_[stage]; }

  // The filler, after its last fill (S15): the last releases of every peer have landed, so none
  // arrives on this CTA's barriers after it exits.
  TC_DEVICE void tail(PipelineState<kStages>& s) const {
    for (uint32_t i = 0; i < protocol_.teardown_rounds; ++i) {
      mbarrier_wait(&empty_[s.stage], s.phase, bound_, {sites_.teardown, s.stage});
      s.advance();
    }
  }

  // A reader: the stage holds its data.
  TC_DEVICE void wait(const PipelineState<kStages>& s) const {
    mbarrier_wait(&full_[s.stage], s.phase, bound_, {sites_.full, s.stage});
  }

  // A reader warp done with `stage`, all lanes calling: lane r arrives on rank r's empty barrier
  // for every rank of the release mask.
  TC_DEVICE void release_by_warp(uint32_t stage, uint32_t lane) const {
    if (lane < kMaxClusterSize && ((protocol_.release_mask >> lane) & 1u)) mbarrier_arrive_cluster(&empty_[stage], lane);
  }

  // A lone reader thread done with `stage`: it arrives on every rank of the release mask itself.
  TC_DEVICE void release_by_thread(uint32_t stage) const {
    for (uint32_t r = 0; r < kMaxClusterSize; ++r)
      if ((protocol_.release_mask >> r) & 1u) mbarrier_arrive_cluster(&empty_[stage], r);
  }

 private:
  uint64_t* full_;
  uint64_t* empty_;
  RingProtocol protocol_;
  const WaitBound& bound_;
  RingSites sites_;
};

#endif

}  // namespace tilecast
