// A grid-wide barrier across the CTAs of a persistent kernel (or of a fixed group of its CTAs),
// release/acquire at GPU scope, bounded by a timeout.
//
// One 32-bit counter, zeroed once at allocation and never reset: every CTA adds 1, except the
// group's CTA 0, which adds 2^31 - (n - 1). A full round adds exactly 2^31, so bit 31 flips and
// the low 31 bits return to 0. No partial round can flip it: a subset without CTA 0 adds at most
// n - 2, one with CTA 0 but not all adds 2^31 - m for some m >= 1, which leaves bit 31 alone
// while the low bits start from 0. A CTA waits until bit 31 differs from the value it saw when it
// arrived. A fast CTA that arrives at the next round cannot flip the bit
// back before every slow CTA arrives there too, so no CTA can miss a flip.
//
// Co-residency is the caller's duty (and the first thing the timeout message asks about): all n
// CTAs must be resident at once, so launch with cudaLaunchAttributeCooperative or check occupancy
// on the host (tilecast/comm/launch.hpp does both).
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/comm/timeout.cuh"

#include <cuda/atomic>

namespace tilecast::comm {

// The CTAs that synchronize together: a whole grid, or (emulating ranks on one GPU) a slice of it.
struct GridGroup {
  uint32_t* counter;   // device memory, zero (or 2^31) at allocation, private to this group
  uint32_t num_ctas;
  uint32_t cta;        // this CTA's index in the group, 0 .. num_ctas - 1

  TC_HOST_DEVICE constexpr uint32_t arrival_increment() const {
    return cta == 0 ? 0x80000000u - (num_ctas - 1) : 1u;
  }
};

// True once the round that `before` (the counter as fetched on arrival) belongs to is complete.
TC_HOST_DEVICE constexpr bool grid_round_done(uint32_t before, uint32_t now) {
  return ((before ^ now) & 0x80000000u) != 0;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

TC_DEVICE inline GridGroup whole_grid(uint32_t* counter) {
  return {counter, gridDim.x * gridDim.y * gridDim.z,
          blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)};
}

// Every thread of every CTA of the group calls this. On return, every write any thread of the
// group made before the call is visible to every thread of the group (GPU scope, and by
// cumulativity also writes those threads had observed from peers). `rank`: the rank the group
// is part of, for a timeout's report (-1: none).
TC_DEVICE inline void grid_sync(const GridGroup& g, const WaitPolicy& policy, const char* tag, int32_t rank = -1) {
  // bar.sync makes the CTA's writes happen-before thread 0's release below (PTX causality is
  // transitive through CTA barriers), so one release per CTA covers all its threads.
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    // GPU scope suffices: every participant is on this GPU. Release publishes this CTA's writes;
    // the add is an RMW, so it reads the latest value in the counter's coherence order and no
    // two CTAs can see the same `before` for the same round boundary.
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> counter(*g.counter);
    const uint32_t before = counter.fetch_add(g.arrival_increment(), cuda::memory_order_release);
    // Acquire pairs with every other CTA's release: their writes are visible once we see the flip.
    uint32_t now = counter.load(cuda::memory_order_acquire);
    if (!grid_round_done(before, now)) {
      const Deadline deadline = Deadline::from_now(policy.timeout_ns);
      while (!grid_round_done(before, now = counter.load(cuda::memory_order_acquire))) {
        if (deadline.expired()) {
          report_and_trap(policy.report, WaitKind::kGridSync, rank, g.cta,
                          /*counter=*/before, /*observed=*/now, /*target=*/before ^ 0x80000000u,
                          /*phase=*/0, /*sign=*/0, /*missing_rank=*/-1, g.num_ctas,
                          deadline.waited(), tag);
        }
      }
    }
  }
  // The other threads of the CTA are ordered after thread 0's acquire by this barrier.
  __syncthreads();
}

#endif  // __CUDACC__ || __CUDACC_RTC__

}  // namespace tilecast::comm
