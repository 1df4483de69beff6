// A diagnostic, compiled in only with -DTILECAST_TIMELINE (through TILECAST_JIT_OPTIONS): SM cycle
// stamps of one CTA's life, printed by every 16th CTA and the last, to see where a short kernel's
// time goes (bench/results/2026-12-02-h200-prologue.md). Without the macro every call is empty.
// With it the printf makes ptxas serialise the wgmma (docs/gemm.md): the prologue's stamps hold,
// the k-loop's length does not. scripts/timeline_summary.py gives each stamp's median and range.
// Every CTA also prints when it entered and left on %globaltimer (TLG lines: how a launch spreads),
// a cluster-reduce kernel's consumers the steps of their last tile's reduce (TLR lines;
// bench/results/2026-12-02-h200-cluster-reduce.md), and the producer when it issues each tile's
// first load (TLU lines: how far apart in time the CTAs that share a tile's rows or columns read
// them; scripts/timeline_summary.py --tiles).
#pragma once

#include "tilecast/device/kernels/gemm_sm90/geometry.cuh"
#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast {

enum class Stamp : uint32_t {
  kEntry = 0,
  kInitsDone,      // the barrier-init thread has set the mbarriers up (and fenced them)
  kGridDepDone,    // ... it is past griddepcontrol.wait (the previous grid's writes visible)
  kClusterReady,   // ... past the prologue's cluster barrier
  kWarp0Arrived,   // thread 0 (the producer's warp) past its arrive on the prologue's cluster barrier
  kWarp0GridDep,   // ... past griddepcontrol.wait
  kWarp0Ready,     // ... past the prologue's cluster barrier
  kWarp0Regs,      // ... past its setmaxnreg
  kProducerIn,     // the producer thread enters run_producer (past setmaxnreg and its election)
  kSchedulerBuilt, // ... its scheduler, unit source and rings are built
  kFirstSeek,      // ... the first seek() has returned
  kFirstSlot,      // ... it holds the tile ring's first slot
  kFirstWork,      // ... the first step's TileWork is worked out
  kFirstStageFree, // ... it holds the operand ring's first stage
  kFirstLoad,      // the producer issues its first operand load
  kFirstStage,     // consumer warpgroup 0 holds the first stage of its (last) tile
  kMainloopDone,   // ... its last wgmma of that tile is done
  kPartialsIn,     // ... (k_cluster) every slice's partial tile of it is stored
  kTileStored,     // ... and its stores are issued
  kDrained,        // consumer warpgroup 0's stores have drained
  kTailDone,       // the producer's teardown waits passed
  kExit,           // thread 0 leaves
  kCount
};

#if defined(TILECAST_TIMELINE) && (defined(__CUDACC__) || defined(__CUDACC_RTC__))
inline constexpr uint32_t kTimelineCtas = 4096;  // CTAs past this share rows (modulo)
__device__ unsigned long long tc_timeline[kTimelineCtas][static_cast<uint32_t>(Stamp::kCount)];
__device__ unsigned long long tc_entry_ns[kTimelineCtas];  // %globaltimer at the CTA's entry (stamp_entry)

TC_DEVICE TC_FORCEINLINE void stamp(Stamp s) {
  tc_timeline[blockIdx.x % kTimelineCtas][static_cast<uint32_t>(s)] = clock64();
}
TC_DEVICE TC_FORCEINLINE void stamp_once(Stamp s, bool& done) {
  if (!done) stamp(s);
  done = true;
}
// A stamp on the way to a first event: only while `done` (the event's stamp_once flag) is unset.
TC_DEVICE TC_FORCEINLINE void stamp_first(Stamp s, bool done) {
  if (!done) stamp(s);
}
// Thread 0 stamps its entry; warp 2's first thread (idle in the prologue) stamps %globaltimer: that
// stamp (the read, its array's address from another constant-bank line, the store) held thread 0,
// the producer's warp, about 550 cycles (bench/results/2026-12-04-h200-producer-prologue.md, run M).
inline constexpr uint32_t kEntryTimerThread = 64;
// One thread's stamp, the others stamp nothing.
TC_DEVICE TC_FORCEINLINE void stamp_by(uint32_t thread, Stamp s) {
  if (threadIdx.x == thread) stamp(s);
}
TC_DEVICE TC_FORCEINLINE void stamp_entry() {
  stamp_by(0, Stamp::kEntry);
  if (threadIdx.x == kEntryTimerThread) tc_entry_ns[blockIdx.x % kTimelineCtas] = cuda::ptx::get_sreg_globaltimer();
}
// The first consumer thread's stamps (the other consumer threads stamp nothing).
TC_DEVICE TC_FORCEINLINE void consumer_stamp(Stamp s) { stamp_by(kFirstConsumerThread, s); }
// Thread 0, last: cycles since entry. Stamps of other threads that are still running (a consumer
// warpgroup's drain, when no exit barrier waits for it) may be stale.
// The cluster-split epilogue's steps on the GPU's clock (ns), from the first consumer thread of
// each consumer warpgroup once it has drained: k-loop done, partials in, band summed, drained.
TC_DEVICE TC_FORCEINLINE unsigned long long now_ns() { return cuda::ptx::get_sreg_globaltimer(); }
TC_DEVICE TC_FORCEINLINE void print_reduce_steps(uint32_t warpgroup, const unsigned long long (&ns)[4]) {
  printf("TLR cta %u wg %u entry_ns %llu mainloop_ns %llu partials_in_ns %llu summed_ns %llu drained_ns %llu\n", blockIdx.x,
         warpgroup, tc_entry_ns[blockIdx.x % kTimelineCtas], ns[0], ns[1], ns[2], ns[3]);
}
// The producer, at a tile's first load: the tile (group, row and column block) on the GPU's clock.
TC_DEVICE TC_FORCEINLINE void print_tile_start(const TileWork& w) {
  printf("TLU cta %u group %u m %u n %u ns %llu\n", blockIdx.x, w.group, w.m_block, w.n_block,
         static_cast<unsigned long long>(cuda::ptx::get_sreg_globaltimer()));
}
TC_DEVICE TC_FORCEINLINE void print_timeline() {
  if (threadIdx.x != 0) return;
  stamp(Stamp::kExit);
  // Every CTA: when it entered and left on the GPU's clock (ns), to see how the launch spreads.
  printf("TLG cta %u of %u entry_ns %llu exit_ns %llu\n", blockIdx.x, gridDim.x, tc_entry_ns[blockIdx.x % kTimelineCtas],
         static_cast<unsigned long long>(cuda::ptx::get_sreg_globaltimer()));
  if (blockIdx.x % 16 != 0 && blockIdx.x + 1 != gridDim.x) return;
  const unsigned long long* t = tc_timeline[blockIdx.x % kTimelineCtas];
  auto at = [&](Stamp s) { return static_cast<long long>(t[static_cast<uint32_t>(s)] - t[0]); };
  printf("TL cta %u ready %lld first_load %lld first_stage %lld mainloop %lld partials_in %lld stored %lld drained %lld "
         "tail %lld exit %lld\n",
         blockIdx.x, at(Stamp::kClusterReady), at(Stamp::kFirstLoad), at(Stamp::kFirstStage), at(Stamp::kMainloopDone),
         at(Stamp::kPartialsIn), at(Stamp::kTileStored), at(Stamp::kDrained), at(Stamp::kTailDone), at(Stamp::kExit));
  // The producer's path to its first load.
  printf("TLP cta %u inits %lld griddep %lld ready %lld w0arrived %lld w0griddep %lld w0ready %lld w0regs %lld in %lld "
         "built %lld seek %lld slot %lld work %lld stage %lld load %lld\n",
         blockIdx.x, at(Stamp::kInitsDone), at(Stamp::kGridDepDone), at(Stamp::kClusterReady), at(Stamp::kWarp0Arrived),
         at(Stamp::kWarp0GridDep), at(Stamp::kWarp0Ready), at(Stamp::kWarp0Regs), at(Stamp::kProducerIn),
         at(Stamp::kSchedulerBuilt), at(Stamp::kFirstSeek), at(Stamp::kFirstSlot), at(Stamp::kFirstWork),
         at(Stamp::kFirstStageFree), at(Stamp::kFirstLoad));
}
#else
TC_DEVICE TC_FORCEINLINE void stamp(Stamp) {}
TC_DEVICE TC_FORCEINLINE void stamp_once(Stamp, bool&) {}
TC_DEVICE TC_FORCEINLINE void stamp_first(Stamp, bool) {}
TC_DEVICE TC_FORCEINLINE void stamp_by(uint32_t, Stamp) {}
TC_DEVICE TC_FORCEINLINE void stamp_entry() {}
TC_DEVICE TC_FORCEINLINE void consumer_stamp(Stamp) {}
TC_DEVICE TC_FORCEINLINE void print_tile_start(const TileWork&) {}
TC_DEVICE TC_FORCEINLINE void print_timeline() {}
#endif

}  // namespace tilecast
