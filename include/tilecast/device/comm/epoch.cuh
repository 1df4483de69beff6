// The epoch (inbox) protocol, the second form (NCCL's LSA barrier and NVSHMEM's sync work this
// way), shared by the device barrier and the CPU model.
//
// Each rank owns an inbox of R 32-bit slots; slot s is written only by rank s. To arrive at its
// round e (its private epoch, plus one), rank s stores e into slot s of every peer's inbox; a
// rank has passed round e once every slot of its inbox reads e or later. Plain stores, no
// read-modify-write and no contention: each slot has one writer. And since each slot names its
// writer, a timeout can say which rank is missing, which the phase/sign counter (a bare sum)
// cannot.
//
// "Or later", because a fast peer may already have left round e and stored e + 1 before a slow
// rank reads its slot; it cannot get further (round e + 1 needs the slow rank's arrival). The
// comparison is on the difference, wrap-safe for any start value (tests start near 2^32).
#pragma once

#include "tilecast/device/common.cuh"

#include <cuda/atomic>

namespace tilecast::comm {

TC_HOST_DEVICE constexpr bool epoch_reached(uint32_t seen, uint32_t wanted) {
  return static_cast<int32_t>(seen - wanted) >= 0;
}

// Arrive at one peer: our epoch into our slot of its inbox. Release, to publish everything we
// wrote before (the payload) to whoever acquires this value; system scope because that reader is
// another GPU (S14).
template <cuda::thread_scope Scope = cuda::thread_scope_system>
TC_HOST_DEVICE inline void epoch_signal(uint32_t* peer_slot, uint32_t epoch) {
  cuda::atomic_ref<uint32_t, Scope> ref(*peer_slot);
  ref.store(epoch, cuda::memory_order_release);
}

// Poll one slot of our inbox once. Acquire pairs with the writer's release store: its payload is
// visible once the slot reads our epoch (or the writer's next one, stored after it).
template <cuda::thread_scope Scope = cuda::thread_scope_system>
TC_HOST_DEVICE inline bool epoch_arrived(const uint32_t* own_slot, uint32_t epoch, uint32_t* seen) {
  cuda::atomic_ref<uint32_t, Scope> ref(*const_cast<uint32_t*>(own_slot));
  *seen = ref.load(cuda::memory_order_acquire);
  return epoch_reached(*seen, epoch);
}

}  // namespace tilecast::comm
