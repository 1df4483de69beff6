// mbarrier waits and arrives as the GEMM pipeline uses them.
//
// Waits are bounded. A wait that has not completed after the timeout writes what it waited for
// into a record in host-mapped memory and traps: the trap ends the CUDA context, after which
// device memory can no longer be read, but the host's copy of the record can, and the host
// library turns it into the error message. (Not a printf: a printf is a function call, and any
// call in a kernel that runs wgmma makes ptxas serialize every wgmma of the kernel.)
#pragma once

#include <cuda/ptx>

#include "tilecast/device/common.cuh"
#include "tilecast/device/ptx/instructions.cuh"

namespace tilecast {

enum class BarrierId : uint32_t {
  kFull = 1,
  kEmpty = 2,
  kEmptyTeardown = 3,
  kUnitFull = 4,
  kUnitEmpty = 5,
  kCFull = 6,
  kCEmpty = 7,
  kBiasFull = 8,
  kBiasEmpty = 9,
  kTileFull = 10,
  kTileEmpty = 11,
  kTailReady = 12,
  kTailCleared = 13,
  kReduceFull = 14,
  kReduceEmpty = 15,
};

struct WaitSite {
  BarrierId barrier;
  uint32_t index;  // stage or slot
};

inline constexpr uint32_t kWaitTimeoutMagic = 0x7C0FFEE1u;

// Written by a timed-out wait; `magic` last, once the rest is visible.
struct WaitTimeoutRecord {
  uint32_t magic;
  uint32_t barrier;
  uint32_t index;
  uint32_t parity;
  uint32_t block;
  uint32_t thread;
  uint32_t cluster_rank;
  uint32_t timeout_ms;
};

// The timeout in the two units the device uses, converted on the host: a conversion in the
// kernel is hoisted to its start and held in a register for the whole kernel (or spilled), where
// a kernel parameter is read from the constant bank where it is used.
struct WaitBound {
  uint32_t timeout_ticks = 0;           // in units of 1024 ns, as mbarrier_wait counts time
  uint32_t timeout_ms = 0;              // for the record
  WaitTimeoutRecord* record = nullptr;  // host-mapped; may be null
};

TC_HOST_DEVICE constexpr WaitBound wait_bound(uint64_t timeout_ns, WaitTimeoutRecord* record) {
  const uint64_t ticks = timeout_ns >> 10, ms = timeout_ns / 1000000;
  constexpr uint64_t kMax = 0xffffffffu;
  return {static_cast<uint32_t>(ticks < kMax ? ticks : kMax), static_cast<uint32_t>(ms < kMax ? ms : kMax), record};
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

TC_DEVICE TC_FORCEINLINE void record_wait_timeout(const WaitBound& bound, WaitSite site, uint32_t parity) {
  if (WaitTimeoutRecord* r = bound.record) {
    volatile WaitTimeoutRecord* v = r;
    v->barrier = static_cast<uint32_t>(site.barrier);
    v->index = site.index;
    v->parity = parity;
    v->block = blockIdx.x;
    v->thread = threadIdx.x;
    v->cluster_rank = cuda::ptx::get_sreg_cluster_ctarank();
    v->timeout_ms = bound.timeout_ms;
    __threadfence_system();
    v->magic = kWaitTimeoutMagic;
    __threadfence_system();
  }
  ptx::trap_kernel();
}

// Spins on `try_wait` (one mbarrier try_wait, true once the phase completed) until it passes, or
// records a timeout of `site` and traps once the bound has passed. The first try costs no clock read.
template <class TryWait>
TC_DEVICE TC_FORCEINLINE void bounded_wait(TryWait&& try_wait, const WaitBound& bound, WaitSite site, uint32_t parity) {
  if (try_wait()) return;
  // Time in units of 1024 ns, 32 bits (wraps after 73 minutes; the difference is wrap-safe): a
  // 64-bit start time would take registers the epilogue, beside its accumulators, does not have.
  const uint32_t start = static_cast<uint32_t>(cuda::ptx::get_sreg_globaltimer() >> 10);
  while (!try_wait()) {
    const uint32_t now = static_cast<uint32_t>(cuda::ptx::get_sreg_globaltimer() >> 10);
    if (now - start > bound.timeout_ticks) record_wait_timeout(bound, site, parity);
  }
}

// Waits for the phase of the given parity to complete, with the instruction's default acquire
// semantics (CTA scope), which pairs with mbarrier_arrive_cluster's release: a producer that sees
// its empty barrier complete may overwrite the stage in every CTA that arrived.
TC_DEVICE TC_FORCEINLINE void mbarrier_wait(uint64_t* bar, uint32_t parity, const WaitBound& bound, WaitSite site) {
  bounded_wait([&] { return cuda::ptx::mbarrier_try_wait_parity(bar, parity); }, bound, site, parity);
}

// Arrives on the barrier and waits for the phase it arrived on to complete: a barrier of all its
// arrivals, as bar.sync is, but one that compute-sanitizer's racecheck follows (k_tail.cuh).
TC_DEVICE TC_FORCEINLINE void mbarrier_arrive_and_wait(uint64_t* bar, const WaitBound& bound, WaitSite site) {
  const uint64_t token = cuda::ptx::mbarrier_arrive(bar);
  // The parity of a token is not at hand; a timeout's record says 0.
  bounded_wait([&] { return cuda::ptx::mbarrier_try_wait(bar, token); }, bound, site, 0);
}

// mbarrier_wait with acquire at cluster scope: what the peers wrote before their fence and arrive
// (release_to_cluster, mbarrier_arrive_relaxed_cluster), in their shared memory or this CTA's, is
// visible after it.
TC_DEVICE TC_FORCEINLINE void mbarrier_wait_cluster(uint64_t* bar, uint32_t parity, const WaitBound& bound,
                                                    WaitSite site) {
  using namespace cuda::ptx;
  bounded_wait([&] { return mbarrier_try_wait_parity(sem_acquire, scope_cluster, bar, parity); }, bound, site, parity);
}

// Arrives on the barrier at the same shared-memory offset in CTA `rank` of this cluster (itself
// included) at cluster scope, relaxed: after one fence.acq_rel.cluster (release_to_cluster), it
// publishes this thread's earlier writes, and those of the threads it synchronized with before,
// to a peer that waits with mbarrier_wait_cluster.
TC_DEVICE TC_FORCEINLINE void release_to_cluster() {
  cuda::ptx::fence(cuda::ptx::sem_acq_rel, cuda::ptx::scope_cluster);
}
TC_DEVICE TC_FORCEINLINE void mbarrier_arrive_relaxed_cluster(uint64_t* bar, uint32_t rank) {
  ptx::mbarrier_arrive_relaxed_remote(static_cast<uint32_t>(__cvta_generic_to_shared(bar)), rank);
}

// Arrives on the barrier at the same shared-memory offset in CTA `rank` of this cluster (itself
// included): a consumer's release of a stage to the producer that refills it.
TC_DEVICE TC_FORCEINLINE void mbarrier_arrive_cluster(uint64_t* bar, uint32_t rank) {
  ptx::mbarrier_arrive_remote(static_cast<uint32_t>(__cvta_generic_to_shared(bar)), rank);
}

#endif

}  // namespace tilecast
