// The kernels the GPU tests, the worker and the benchmark share: ranks that write a round-stamped
// payload into every peer, pass a barrier, and check what they received.
//
// One launch plays one rank (a kernel per rank, each on its own stream or in its own process) or
// several (rank_base + blockIdx.x / ctas_per_rank: one cooperative kernel for all the emulated
// ranks, which compute-sanitizer can run, since it serialises concurrent kernels).
#pragma once

#include <cuda/atomic>

#include <cstdio>
#include <string>

#include "tilecast/device/comm/comm.cuh"

namespace tilecast::comm::testing {

// What the checking found; in device memory, zeroed before a launch.
struct RoundStats {
  uint32_t errors;
  uint32_t claimed;      // the first mismatch is recorded by whoever claims this
  int32_t rank;
  uint32_t round;
  int32_t src;
  uint32_t cta;
  uint32_t word;
  uint32_t got;
  uint32_t want;
  uint32_t checked_lo;   // words checked (low 32 bits; every rank adds)
};

struct RoundArgs {
  SymmetricMap map;            // any rank's view of the regions; each rank re-views with as_rank
  uint64_t channel_offset;     // the barrier channel inside each region
  uint64_t payload_offset;     // payload[parity][src][cta][word] inside each region
  int32_t rank_base;
  uint32_t ctas_per_rank;
  uint32_t words;              // per CTA, per peer, per round; 0 times the barrier alone
  uint32_t rounds;
  uint32_t first_round;        // round numbers (stamps, parity) start here
  WaitPolicy policy;
  int32_t stop_rank = -1;      // this rank leaves after `stop_after` rounds (negative tests)
  uint32_t stop_after = 0;
  int32_t skew_rank = -1;      // this rank's CTA 0 dawdles `skew_ns` before arriving in `skew_round`
  uint32_t skew_round = 0;
  uint64_t skew_ns = 0;
  uint64_t* timestamps = nullptr;  // [rank - rank_base][round]: %globaltimer after each barrier
  RoundStats* stats = nullptr;
};

TC_HOST_DEVICE inline uint64_t payload_bytes(int32_t ranks, uint32_t ctas, uint32_t words) {
  return 2ull * static_cast<uint64_t>(ranks) * ctas * words * sizeof(uint32_t);
}

// Distinct for every (round, src, cta, word); in particular round r and r - 2, which share a
// payload buffer, never stamp alike (the multiplier is odd).
TC_HOST_DEVICE inline uint32_t stamp(uint32_t round, int32_t src, uint32_t cta, uint32_t word) {
  return round * 2654435761u ^ (static_cast<uint32_t>(src) * 0x01000193u + cta * 0x27d4eb2du + word * 0x165667b1u + 0x5bd1e995u);
}

// One line for a failed check.
inline std::string describe(const RoundStats& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%u mismatches of %u words checked; first: rank %d round %u from rank %d cta %u word %u got %08x want %08x",
                s.errors, s.checked_lo, s.rank, s.round, s.src, s.cta, s.word, s.got, s.want);
  return buf;
}

#if defined(__CUDACC__)

template <BarrierForm kForm>
__global__ void barrier_rounds_kernel(RoundArgs a) {
  const uint32_t per_rank = a.ctas_per_rank;
  const int32_t rank = a.rank_base + static_cast<int32_t>(blockIdx.x / per_rank);
  const uint32_t cta = blockIdx.x % per_rank;
  const SymmetricMap map = a.map.as_rank(rank);
  const BarrierState s = BarrierState::at(map, a.channel_offset);
  const GridGroup group{s.grid_counter, per_rank, cta};
  const int32_t ranks = map.num_ranks;
  uint32_t* payload = reinterpret_cast<uint32_t*>(static_cast<char*>(map.local()) + a.payload_offset);
  // CTA c checks what CTA c + 1 of every rank wrote: the check then depends on the whole chain
  // (their grid sync, their CTA 0's signal, our CTA 0's wait, our grid sync), not on one CTA.
  const uint32_t from = (cta + 1) % per_rank;
  uint32_t checked = 0;
  for (uint32_t i = 0; i < a.rounds; ++i) {
    if (rank == a.stop_rank && i == a.stop_after) break;
    const uint32_t round = a.first_round + i;
    const uint32_t parity = round & 1u;
    for (int32_t peer = 0; peer < ranks; ++peer) {
      uint32_t* dst = map.map(payload, peer) + ((static_cast<uint64_t>(parity) * ranks + rank) * per_rank + cta) * a.words;
      for (uint32_t w = threadIdx.x; w < a.words; w += blockDim.x) dst[w] = stamp(round, rank, cta, w);
    }
    if (rank == a.skew_rank && i == a.skew_round && cta == 0 && threadIdx.x == 0) {
      const uint64_t until = globaltimer_ns() + a.skew_ns;
      while (globaltimer_ns() < until) {
      }
    }
    cross_rank_barrier<kForm>(s, group, a.policy, "test-rounds");
    if (a.timestamps != nullptr && cta == 0 && threadIdx.x == 0) {
      a.timestamps[static_cast<uint64_t>(rank - a.rank_base) * a.rounds + i] = globaltimer_ns();
    }
    for (int32_t src = 0; src < ranks; ++src) {
      const uint32_t* got = payload + ((static_cast<uint64_t>(parity) * ranks + src) * per_rank + from) * a.words;
      for (uint32_t w = threadIdx.x; w < a.words; w += blockDim.x) {
        const uint32_t want = stamp(round, src, from, w);
        const uint32_t v = got[w];
        ++checked;
        if (v != want) {
          atomicAdd(&a.stats->errors, 1u);
          if (atomicCAS(&a.stats->claimed, 0u, 1u) == 0u) {
            a.stats->rank = rank;
            a.stats->round = round;
            a.stats->src = src;
            a.stats->cta = from;
            a.stats->word = w;
            a.stats->got = v;
            a.stats->want = want;
          }
        }
      }
    }
  }
  if (checked != 0) atomicAdd(&a.stats->checked_lo, checked);
}

// Grid sync alone: every CTA stamps its slot, syncs, and checks its neighbour's.
struct GridRoundArgs {
  uint32_t* counter;
  uint32_t* slots;  // [parity][cta]
  uint32_t rounds;
  WaitPolicy policy;
  RoundStats* stats;
  uint64_t* start_ns;  // min %globaltimer at which a CTA started (co-residency tests), or null
};

__global__ void grid_rounds_kernel(GridRoundArgs a) {
  const GridGroup g = whole_grid(a.counter);
  if (a.start_ns != nullptr && threadIdx.x == 0) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> start(*reinterpret_cast<unsigned long long*>(a.start_ns));
    start.fetch_min(globaltimer_ns(), cuda::memory_order_relaxed);
  }
  for (uint32_t round = 0; round < a.rounds; ++round) {
    const uint32_t parity = round & 1u;
    if (threadIdx.x == 0) a.slots[parity * g.num_ctas + g.cta] = stamp(round, 0, g.cta, 0);
    grid_sync(g, a.policy, "test-grid");
    if (threadIdx.x == 0) {
      const uint32_t from = (g.cta + 1) % g.num_ctas;
      const uint32_t v = a.slots[parity * g.num_ctas + from];
      if (v != stamp(round, 0, from, 0)) {
        atomicAdd(&a.stats->errors, 1u);
        if (atomicCAS(&a.stats->claimed, 0u, 1u) == 0u) {
          a.stats->round = round;
          a.stats->cta = from;
          a.stats->got = v;
          a.stats->want = stamp(round, 0, from, 0);
        }
      }
    }
  }
}

// Holds SMs (one CTA each, given enough dynamic shared memory) for `ns`, like another stream's
// persistent kernel; tells the host when it is running.
__global__ void hog_kernel(uint64_t ns, uint32_t* running, uint64_t* ended_ns) {
  const uint64_t until = globaltimer_ns() + ns;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*running).store(1u, cuda::memory_order_release);
  }
  while (globaltimer_ns() < until) {
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *ended_ns = globaltimer_ns();
}

#endif  // __CUDACC__

}  // namespace tilecast::comm::testing
