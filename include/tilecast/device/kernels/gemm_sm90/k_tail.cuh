// The last k-step of a k-group whose K is not a multiple of 64 (k-grouped GEMMs only).
//
// NOTES: groups lie side by side along K in A and B, so the last box of group g (64 columns from
// where its last k-step starts) also holds the first columns of group g + 1. They are inside the
// tensor, so the TMA loads them instead of zero-filling, and the wgmma would add their products
// into group g's result: a silent wrong answer. The host cannot know the group sizes (they are in
// device memory, and the call must not synchronise), so the kernel makes any K exact: before the
// wgmma reads such a stage, the columns past the group's end are cleared in both operand tiles of
// the CTA's own copy of the stage. Both, because 0 x Inf and 0 x NaN are NaN: clearing only A would
// let a non-finite value of the next group into this one's result. Each CTA clears its own copy (a
// multicast wrote the same bytes into every CTA of its mask), after the stage's full barrier and
// before its release, so no load and no peer's wgmma can race with it.
//
// Who clears: the producer warpgroup's warps 2-3, idle otherwise (thread 0 issues the loads, warp 1
// checks the group data and, with C, lane 0 of it loads the epilogue's C: epilogue_loader.cuh). The
// consumers hold every accumulator at that point: a clear of their own made ptxas spill 12-28
// bytes at 128x256 with FP32 output and C, however it was written. So they only hand the stage
// over, through the k_tail word and two mbarriers:
//   consumers: wait the stage's full barrier (as always); consumer thread 0 writes the stage and
//              the valid columns into the word and arrives on k_tail_ready (count 1); every
//              consumer arrives on k_tail_cleared and waits for that phase; then the wgmma.
//              (Ping-pong kernels: the warpgroup whose turn it is, and its thread 0.)
//   clearers:  wait k_tail_ready's next phase (their own parity), read the word, clear, fence the
//              generic writes for the async proxy (wgmma), arrive on k_tail_cleared. A word of
//              kTailDone ends their loop: consumer thread 0 writes it once the walk is over.
// The arrive's release and the wait's acquire order the word's write before its read, and each
// read before the next write (the consumers' wait on k_tail_cleared comes between).
// NOTES: this handshake ran on named barriers (bar.sync) before; compute-sanitizer's racecheck
// reported the word's writes against the clearers' reads there (4-20 hazards per kernel on
// GroupedSmall's k-grouped kernels, H200) whatever the barriers' form, though every read was
// ordered and the results right. It follows mbarriers, as it does in every ring of the kernel.
// The handshake also paces the clearers: they never run ahead of the consumers, and their
// k_tail_ready waits cannot alias a parity (one phase per handover, each consumed before the next
// is written). Its cost falls on one k-step per group and tile: two mbarrier operations for the
// consumers, and (block_m + block_n) x 8 stores of 16 bytes over 64 threads.
#pragma once

#include <cuda/ptx>

#include "tilecast/device/kernels/gemm_sm90/smem.cuh"
#include "tilecast/device/pipeline/mbarrier.cuh"
#include "tilecast/device/ptx/instructions.cuh"

namespace tilecast {

// The k-tail clearers: threads 64..127, warps 2-3 of the producer warpgroup.
inline constexpr uint32_t kTailClearerFirstThread = 64;
inline constexpr uint32_t kTailClearers = 64;
// The k_tail word: stage | valid columns << 8, or this once the consumers are done.
inline constexpr uint32_t kTailDone = 0xFFFFFFFFu;

// The stores of clearer `clearer` (0..kTailClearers-1) that clear columns [valid, 64) of every row
// of an A tile of kRowsA rows and a B tile of kRowsB rows, both in the 128-byte swizzle (16-byte
// chunk c of row r at r * 128 + (c ^ (r % 8)) * 16, the tiles 1024-aligned): each clearer takes one
// chunk position of every eighth row. clear(in_a, byte offset of the chunk in its tile, first
// element of the chunk to clear: 0..7) is called once per chunk that holds a column to clear.
// Host and device: tests/cpu/api/test_k_tail.cpp plays every clearer and checks the bytes.
template <uint32_t kRowsA, uint32_t kRowsB, class Clear>
TC_HOST_DEVICE void k_tail_stores(uint32_t valid, uint32_t clearer, Clear&& clear) {
  constexpr uint32_t kRowsPerPass = kTailClearers / 8;
  const uint32_t chunk = clearer % 8;
  // Elements of the chunk that stay: 8 below `valid`, then valid % 8, then none.
  const int32_t keep = static_cast<int32_t>(valid) - static_cast<int32_t>(chunk * 8);
  if (keep >= 8) return;
  const uint32_t first = keep > 0 ? static_cast<uint32_t>(keep) : 0u;
  for (uint32_t row = clearer / 8; row < kRowsA + kRowsB; row += kRowsPerPass) {
    const bool in_a = row < kRowsA;
    const uint32_t r = in_a ? row : row - kRowsA;
    clear(in_a, r * 128 + ((chunk ^ (r % 8)) * 16), first);
  }
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// Clears columns [valid, 64) of stage `stage`'s A and B tiles (one clearer's share).
template <typename Cfg>
TC_DEVICE void clear_k_tail(const GemmSm90Smem<Cfg>& smem, uint32_t stage, uint32_t valid, uint32_t clearer) {
  static_assert(Cfg::kBlockK == 64, "one 128-byte swizzle span per row");
  uint8_t* a = smem.a[stage];
  uint8_t* b = smem.b[stage];
  k_tail_stores<Cfg::kBlockM, Cfg::kBlockN>(valid, clearer, [a, b](bool in_a, uint32_t offset, uint32_t first) {
    uint8_t* at = (in_a ? a : b) + offset;
    if (first == 0) {
      *reinterpret_cast<uint4*>(at) = make_uint4(0, 0, 0, 0);
    } else {
      for (uint32_t e = first; e < 8; ++e) reinterpret_cast<uint16_t*>(at)[e] = 0;
    }
  });
}

// The mbarriers' arrival counts: the word's writer; every clearer and every consumer thread that
// reads the stage (with kPingpong, those of the warpgroup whose turn it is).
template <typename Cfg>
TC_HOST_DEVICE constexpr uint32_t tail_cleared_arrivals() {
  return kTailClearers + kWarpgroupThreads * (Cfg::kPingpong ? 1 : Cfg::kConsumerWarpgroups);
}

// The thread that writes the k_tail word: the first consumer thread, or with kPingpong the first
// thread of the calling warpgroup (a stage is handed over only by the warpgroup whose turn it is,
// and the turns never overlap their main loops).
template <typename Cfg>
TC_DEVICE TC_FORCEINLINE bool writes_k_tail_word() {
  return Cfg::kPingpong ? threadIdx.x % kWarpgroupThreads == 0 : threadIdx.x == kFirstConsumerThread;
}
inline constexpr uint32_t kTailReadyArrivals = 1;

// Thread 0, at the kernel's start, before the cluster barrier that publishes the inits.
template <typename Cfg>
TC_DEVICE void init_k_tail_barriers(const GemmSm90Smem<Cfg>& smem) {
  cuda::ptx::mbarrier_init(smem.k_tail_ready, kTailReadyArrivals);
  cuda::ptx::mbarrier_init(smem.k_tail_cleared, tail_cleared_arrivals<Cfg>());
}

// The clearers' loop (threads kTailClearerFirstThread.., after the register handoff).
template <typename Cfg>
TC_DEVICE void run_k_tail_clearers(const GemmSm90Smem<Cfg>& smem, const WaitBound& bound) {
  const uint32_t clearer = threadIdx.x - kTailClearerFirstThread;
  for (uint32_t parity = 0;; parity ^= 1u) {
    mbarrier_wait(smem.k_tail_ready, parity, bound, {BarrierId::kTailReady, 0});
    const uint32_t word = *smem.k_tail;
    if (word == kTailDone) return;
    clear_k_tail<Cfg>(smem, word & 0xFFu, word >> 8, clearer);
    // Generic-proxy writes, read next by wgmma (async proxy).
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    cuda::ptx::mbarrier_arrive(smem.k_tail_cleared);
  }
}

// The consumers, every thread, on a k-group's last k-step whose `valid` columns (1..63) are not
// all 64, after the stage's full barrier: hands the stage to the clearers and waits until it is
// cleared.
template <typename Cfg>
TC_DEVICE TC_FORCEINLINE void hand_over_k_tail(const GemmSm90Smem<Cfg>& smem, const WaitBound& bound, uint32_t stage,
                                               uint32_t valid) {
  if (writes_k_tail_word<Cfg>()) {
    *smem.k_tail = stage | (valid << 8);
    cuda::ptx::mbarrier_arrive(smem.k_tail_ready);
  }
  mbarrier_arrive_and_wait(smem.k_tail_cleared, bound, {BarrierId::kTailCleared, stage});
}

// The consumers, every thread, once their walk is over (with kPingpong, the warpgroup that took
// the last turn's hand-over, after which no stage is handed over): ends the clearers' loop.
template <typename Cfg>
TC_DEVICE TC_FORCEINLINE void release_k_tail_clearers(const GemmSm90Smem<Cfg>& smem) {
  if (writes_k_tail_word<Cfg>()) {
    *smem.k_tail = kTailDone;
    cuda::ptx::mbarrier_arrive(smem.k_tail_ready);
  }
}

#endif

}  // namespace tilecast
