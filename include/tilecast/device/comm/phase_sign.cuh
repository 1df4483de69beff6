// The phase/sign counter protocol (S13), the arithmetic and the atomics of one round, shared by
// the device barrier and the CPU model (tests/cpu/comm), so the model runs this very code.
//
// Each rank keeps a private round counter c and owns two signal slots that every rank adds to.
// Round c uses slot (c & 1) ("phase") and adds +1 while bit 1 of c ("sign") is 0, -1 while it is
// 1; the slot therefore climbs 0 -> R in one use and falls R -> 0 in the next, and the waiter
// polls for R or 0. Nothing is ever reset, and 2^32 is a multiple of 4, so the counter may wrap.
//
// Why two slots: a rank that leaves round c may arrive at round c + 1 while a slow peer still
// polls slot (c & 1) for round c. Its next add therefore goes to the other slot; it can come back
// to slot (c & 1) only in round c + 2, which it enters after round c + 1 completed, i.e. after
// every rank has arrived at c + 1 and hence finished polling in round c.
// Why the sign: without it the slot would have to be reset to 0 between uses, and a reset racing
// a fast peer's next add is a known bug (NVSHMEM #98). models/barrier.pml checks both claims.
#pragma once

#include "tilecast/device/common.cuh"

#include <cuda/atomic>

namespace tilecast::comm {

struct PhaseSignRound {
  uint32_t counter;  // this rank's counter before the round

  TC_HOST_DEVICE constexpr uint32_t phase() const { return counter & 1u; }
  TC_HOST_DEVICE constexpr uint32_t sign() const { return (counter >> 1) & 1u; }
  TC_HOST_DEVICE constexpr int32_t delta() const { return sign() ? -1 : 1; }
  TC_HOST_DEVICE constexpr int32_t target(int32_t num_ranks) const { return sign() ? 0 : num_ranks; }
  TC_HOST_DEVICE constexpr PhaseSignRound next() const { return {counter + 1u}; }
};

// The value slot `slot` must hold before round `counter`, so that any starting counter works
// (the counter-wrap tests start near 2^32): the next round that uses the slot decides it.
TC_HOST_DEVICE constexpr int32_t phase_sign_initial_slot(uint32_t counter, uint32_t slot,
                                                         int32_t num_ranks) {
  const PhaseSignRound first{(counter & 1u) == slot ? counter : counter + 1u};
  return first.sign() ? num_ranks : 0;
}

// Arrive: add this round's delta to one rank's slot (a peer's, through the symmetric map, or our
// own). Release, so that everything this rank wrote before (payload into the peer's memory, made
// visible to this thread by the grid sync) is visible to whoever acquires the slot's new value.
// System scope because the reader runs on another GPU (S14: GPU scope orders only within one).
template <cuda::thread_scope Scope = cuda::thread_scope_system>
TC_HOST_DEVICE inline void phase_sign_signal(int32_t* slot, PhaseSignRound round) {
  cuda::atomic_ref<int32_t, Scope> ref(*slot);
  ref.fetch_add(round.delta(), cuda::memory_order_release);
}

// Poll once: true when every rank has added to our slot this round. Acquire, to pair with the
// ranks' release adds. Reading the round's last add is enough for all of them: the slot is only
// ever changed by read-modify-writes, so each add's release sequence runs on through every later
// add, and the acquire synchronizes with each rank's release.
template <cuda::thread_scope Scope = cuda::thread_scope_system>
TC_HOST_DEVICE inline bool phase_sign_arrived(const int32_t* slot, PhaseSignRound round,
                                              int32_t num_ranks, int32_t* seen) {
  cuda::atomic_ref<int32_t, Scope> ref(*const_cast<int32_t*>(slot));
  *seen = ref.load(cuda::memory_order_acquire);
  return *seen == round.target(num_ranks);
}

}  // namespace tilecast::comm
