// The cross-rank barrier (S13) in its two forms, as device functions for persistent kernels.
//
//   full barrier = grid sync (GPU scope) -> one CTA signals every rank and waits (system scope)
//                  -> grid sync (GPU scope)
//
// Why this chain is enough for "data before signal" across GPUs: a CTA's payload stores (local
// or into peers' memory) happen-before its grid-sync release; CTA 0's acquire of the grid
// counter and its bar.sync carry them to the signalling threads, whose system-scope release
// (add or store) is cumulative over everything that happens-before it. The peer's system-scope
// acquire then makes them visible to its CTA 0, and its second grid sync hands them to all its
// CTAs. PTX causality order is transitive across these scopes, so the GPU-scope links do not
// weaken the system-scope ones (S14 is about the scope of each synchronizing pair, and each pair
// here is within the scope it names).
//
// Requirements: every CTA of the group calls the same barrier the same number of times; the
// group is co-resident (see grid_sync.cuh); the calling CTA has any number of threads (peers are
// strided over threads, so more ranks than threads is fine).
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/comm/barrier_state.cuh"
#include "tilecast/device/comm/epoch.cuh"
#include "tilecast/device/comm/grid_sync.cuh"
#include "tilecast/device/comm/phase_sign.cuh"
#include "tilecast/device/comm/timeout.cuh"

namespace tilecast::comm {

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace detail {
TC_DEVICE TC_FORCEINLINE uint32_t thread_rank_in_cta() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
TC_DEVICE TC_FORCEINLINE uint32_t cta_threads() { return blockDim.x * blockDim.y * blockDim.z; }
}  // namespace detail

// The cross-rank step alone, phase/sign form, run by all threads of exactly one CTA per rank.
// Writes made by this CTA before the call are published; for writes of other CTAs of the
// rank, use the full barrier (or a grid sync before this).
TC_DEVICE inline void phase_sign_cross_rank(const BarrierState& s, const WaitPolicy& policy,
                                            const char* tag) {
  const uint32_t tid = detail::thread_rank_in_cta();
  // Every thread reads the counter before the bar.sync, and thread 0 advances it only after:
  // a thread that read it late would otherwise pick the next round's slot.
  const PhaseSignRound round{*s.phase_counter};
  __syncthreads();
  const int32_t num_ranks = s.map.num_ranks;
  for (int32_t peer = static_cast<int32_t>(tid); peer < num_ranks;
       peer += static_cast<int32_t>(detail::cta_threads())) {
    phase_sign_signal<cuda::thread_scope_system>(s.map.map(s.signal + round.phase(), peer), round);
  }
  if (tid == 0) {
    const int32_t* slot = s.signal + round.phase();
    int32_t seen = 0;
    if (!phase_sign_arrived<cuda::thread_scope_system>(slot, round, num_ranks, &seen)) {
      const Deadline deadline = Deadline::from_now(policy.timeout_ns);
      while (!phase_sign_arrived<cuda::thread_scope_system>(slot, round, num_ranks, &seen)) {
        if (deadline.expired()) {
          // A sum cannot say who is missing (missing_rank -1); the epoch form can.
          report_and_trap(policy.report, WaitKind::kPhaseSign, s.map.rank, blockIdx.x,
                          round.counter, seen, round.target(num_ranks), round.phase(),
                          round.sign(), /*missing_rank=*/-1, static_cast<uint32_t>(num_ranks),
                          deadline.waited(), tag);
        }
      }
    }
    // Only this thread ever writes the counter, and the next reads are ordered after this
    // store by the bar.sync below (or by the next grid sync).
    *s.phase_counter = round.counter + 1u;
  }
  // The other threads are ordered after thread 0's acquire.
  __syncthreads();
}

// The cross-rank step alone, epoch form. Thread t stores to peers t, t + threads, ... and waits
// for those peers' slots, so the waits run in parallel and a timeout names the missing rank.
TC_DEVICE inline void epoch_cross_rank(const BarrierState& s, const WaitPolicy& policy,
                                       const char* tag) {
  const uint32_t tid = detail::thread_rank_in_cta();
  const uint32_t epoch = *s.epoch + 1u;  // read before the bar.sync; thread 0 writes after it
  __syncthreads();
  const int32_t num_ranks = s.map.num_ranks;
  const int32_t me = s.map.rank;
  const int32_t step = static_cast<int32_t>(detail::cta_threads());
  for (int32_t peer = static_cast<int32_t>(tid); peer < num_ranks; peer += step) {
    if (peer != me) epoch_signal<cuda::thread_scope_system>(s.map.map(s.inbox + me, peer), epoch);
  }
  for (int32_t src = static_cast<int32_t>(tid); src < num_ranks; src += step) {
    if (src == me) continue;
    uint32_t seen = 0;
    if (epoch_arrived<cuda::thread_scope_system>(s.inbox + src, epoch, &seen)) continue;
    const Deadline deadline = Deadline::from_now(policy.timeout_ns);
    while (!epoch_arrived<cuda::thread_scope_system>(s.inbox + src, epoch, &seen)) {
      if (deadline.expired()) {
        report_and_trap(policy.report, WaitKind::kEpoch, me, blockIdx.x, /*counter=*/epoch - 1u,
                        seen, /*target=*/epoch, /*phase=*/0, /*sign=*/0, /*missing_rank=*/src,
                        static_cast<uint32_t>(num_ranks), deadline.waited(), tag);
      }
    }
  }
  if (tid == 0) *s.epoch = epoch;
  // Every waiting thread's acquire is ordered before the CTA continues.
  __syncthreads();
}

enum class BarrierForm : uint32_t { kPhaseSign = 0, kEpoch = 1 };

// The full barrier: every CTA of the rank's grid group calls it. On return, every write that any
// CTA of any rank made before its call is visible to every thread of every rank.
template <BarrierForm kForm>
TC_DEVICE inline void cross_rank_barrier(const BarrierState& s, const GridGroup& group,
                                         const WaitPolicy& policy, const char* tag) {
  if (group.num_ctas > 1) grid_sync(group, policy, tag, s.map.rank);
  if (group.cta == 0) {
    if constexpr (kForm == BarrierForm::kPhaseSign) {
      phase_sign_cross_rank(s, policy, tag);
    } else {
      epoch_cross_rank(s, policy, tag);
    }
  }
  // The CTAs waiting here also wait out CTA 0's cross-rank wait, which knows more (which rank
  // is missing, the counter); give it the first word by waiting twice as long here.
  // (Saturating: twice a bound of 2^63 ns or more would wrap to a small one.)
  const uint64_t twice = policy.timeout_ns > ~uint64_t{0} / 2 ? ~uint64_t{0} : 2 * policy.timeout_ns;
  if (group.num_ctas > 1) grid_sync(group, WaitPolicy{twice, policy.report}, tag, s.map.rank);
}

TC_DEVICE inline void phase_sign_barrier(const BarrierState& s, const GridGroup& group,
                                         const WaitPolicy& policy, const char* tag) {
  cross_rank_barrier<BarrierForm::kPhaseSign>(s, group, policy, tag);
}

TC_DEVICE inline void epoch_barrier(const BarrierState& s, const GridGroup& group,
                                    const WaitPolicy& policy, const char* tag) {
  cross_rank_barrier<BarrierForm::kEpoch>(s, group, policy, tag);
}

#endif  // __CUDACC__ || __CUDACC_RTC__

}  // namespace tilecast::comm
