// Bounded waits: every spin in comm/ ends either in success or, after a run-time timeout, in a
// printed diagnostic, an optional record in host-visible memory, and a trap. Never a silent hang.
//
// The clock is %globaltimer (nanoseconds, the same on every SM and unaffected by clock
// throttling), read through cuda::ptx; counting clock64() cycles against an assumed clock rate
// (DeepGEMM's 2 GHz) is wrong by the ratio of the real clock, and per SM.
#pragma once

#include "tilecast/device/common.cuh"

#include <cuda/atomic>
#include <cuda/std/cstdint>
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#include <cuda/ptx>
#endif
#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)
// nvcc declares device printf only through the C header; NVRTC declares it itself.
#include <cstdio>
#endif

namespace tilecast::comm {

// Which wait gave up.
enum class WaitKind : uint32_t { kNone = 0, kGridSync = 1, kPhaseSign = 2, kEpoch = 3 };

// What a timed-out wait saw. Written (when the caller gives one) into memory the host can read
// after the trap has killed the context: pinned, mapped host memory. `valid` is stored last.
struct TimeoutReport {
  uint32_t valid;         // 1 once a wait timed out
  WaitKind kind;
  int32_t rank;           // the rank that waited (-1 for a plain grid sync)
  uint32_t sm;
  uint32_t cta;           // index in the grid group
  uint32_t counter;       // phase/sign counter, epoch, or grid counter before arriving
  int64_t observed;       // the word polled, as last read
  int64_t target;         // the value it waited for
  uint32_t phase;
  uint32_t sign;
  int32_t missing_rank;   // epoch form: the peer whose slot is behind; -1 where unknown
  uint32_t num_ranks;     // ranks, or CTAs for a grid sync
  uint64_t waited_ns;
  char tag[32];
};

static_assert(sizeof(TimeoutReport) % 4 == 0, "copied word by word");

// Run-time limits of every wait, passed by value to kernels. The timeout is not a compile-time
// constant: users whose first launch JIT-compiles for minutes need minutes, tests need
// milliseconds, and a recompile per value would defeat the kernel cache.
struct WaitPolicy {
  uint64_t timeout_ns = 300ull * 1000 * 1000 * 1000;  // 300 s
  TimeoutReport* report = nullptr;                     // optional, device-visible host memory
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

TC_DEVICE TC_FORCEINLINE uint64_t globaltimer_ns() { return cuda::ptx::get_sreg_globaltimer(); }
TC_DEVICE TC_FORCEINLINE uint32_t sm_id() { return cuda::ptx::get_sreg_smid(); }

// A wait's deadline. One timer read per poll costs a few cycles next to a system-scope load.
struct Deadline {
  uint64_t start;
  uint64_t timeout_ns;

  TC_DEVICE static Deadline from_now(uint64_t timeout_ns) { return {globaltimer_ns(), timeout_ns}; }
  TC_DEVICE bool expired() const { return globaltimer_ns() - start > timeout_ns; }
  TC_DEVICE uint64_t waited() const { return globaltimer_ns() - start; }
};

// Fills the host-visible record (if any), then traps. The trap ends the kernel and poisons the
// context, which is the point: a barrier that cannot complete must not let the kernel go on
// with stale peer data. The stores are system scope and the `valid` flag is released last, so a
// host that sees valid == 1 sees the fields (the host reads after the failed synchronize anyway).
TC_DEVICE inline const char* wait_kind_name(WaitKind k) {
  switch (k) {
    case WaitKind::kGridSync: return "grid sync";
    case WaitKind::kPhaseSign: return "phase/sign barrier";
    case WaitKind::kEpoch: return "epoch barrier";
    default: return "wait";
  }
}

// Prints one line with everything a user needs to find the culprit, records it for the host if
// asked, and traps. Never inlined, and fed scalars (which travel in registers) rather than a
// struct: otherwise its locals (the printf buffer, the record) would sit in the stack frame of
// every kernel that contains a barrier.
__noinline__ TC_DEVICE inline void report_and_trap(TimeoutReport* report, WaitKind kind, int32_t rank,
                                                    uint32_t cta, uint32_t counter, int64_t observed,
                                                    int64_t target, uint32_t phase, uint32_t sign,
                                                    int32_t missing_rank, uint32_t num_ranks,
                                                    uint64_t waited_ns, const char* tag) {
  TimeoutReport r{};
  r.kind = kind;
  r.rank = rank;
  r.sm = sm_id();
  r.cta = cta;
  r.counter = counter;
  r.observed = observed;
  r.target = target;
  r.phase = phase;
  r.sign = sign;
  r.missing_rank = missing_rank;
  r.num_ranks = num_ranks;
  r.waited_ns = waited_ns;
  printf("tilecast: %s timed out after %llu ns: tag=%s rank=%d sm=%u cta=%u counter=%u "
         "observed=%lld target=%lld phase=%u sign=%u missing_rank=%d ranks=%u%s\n",
         wait_kind_name(r.kind), static_cast<unsigned long long>(r.waited_ns),
         tag != nullptr ? tag : "-", r.rank, r.sm, r.cta, r.counter,
         static_cast<long long>(r.observed), static_cast<long long>(r.target), r.phase, r.sign,
         r.missing_rank, r.num_ranks,
         r.kind == WaitKind::kGridSync
             ? " (are all CTAs co-resident? launch cooperatively or leave SMs free)"
             : "");
  if (TimeoutReport* out = report) {
    int i = 0;
    for (; tag != nullptr && tag[i] != '\0' && i < 31; ++i) r.tag[i] = tag[i];
    r.tag[i] = '\0';
    r.valid = 0;
    // Several waiters may time out at once; the first to claim the record writes it.
    cuda::atomic_ref<uint32_t, cuda::thread_scope_system> claim(out->valid);
    uint32_t expected = 0;
    if (claim.compare_exchange_strong(expected, 2u, cuda::memory_order_relaxed)) {
      TimeoutReport* dst = out;
      const uint32_t* src_words = reinterpret_cast<const uint32_t*>(&r);
      uint32_t* dst_words = reinterpret_cast<uint32_t*>(dst);
      for (uint32_t w = 1; w < sizeof(TimeoutReport) / 4; ++w) dst_words[w] = src_words[w];
      cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_system);
      claim.store(1u, cuda::memory_order_relaxed);
    }
  }
  cuda::ptx::trap();
}

#endif  // __CUDACC__ || __CUDACC_RTC__

}  // namespace tilecast::comm
