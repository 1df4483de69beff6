// The cross-rank barrier's protocol as a CPU model: host threads play the ranks and run the very
// functions the device barrier uses (phase_sign.cuh, epoch.cuh: cuda::atomic_ref with C++
// release/acquire). Each round every rank writes a round-stamped payload into every peer with
// plain stores, arrives, waits, and then checks what it received: a barrier that let a rank
// through early, or that did not order data before signal, shows up as a stale payload (and, in
// the ThreadSanitizer build of this file, as a data race). Nothing is ever reset between rounds;
// the final state must equal what the start state predicts.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tilecast/device/comm/barrier_state.cuh"
#include "tilecast/device/comm/epoch.cuh"
#include "tilecast/device/comm/phase_sign.cuh"

namespace tc = tilecast::comm;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kPayloadWords = 4;  // several words per message, so a torn message is caught too

// Shared memory of the model: what would live in the ranks' symmetric regions.
struct World {
  int ranks;
  std::vector<int32_t> signal;            // [rank][2]          phase/sign slots
  std::vector<uint32_t> inbox;            // [rank][src]        epoch slots
  std::vector<uint64_t> payload;          // [dst][parity][src][word], plain (non-atomic) data
  std::vector<std::atomic<uint64_t>> arrived;  // ghost: rounds each rank has arrived at (relaxed)
  std::atomic<bool> failed{false};
  std::string failure;
  std::atomic<int> failure_claim{0};

  World(int r, uint32_t first_counter, uint32_t first_epoch)
      : ranks(r),
        signal(static_cast<size_t>(2 * r)),
        inbox(static_cast<size_t>(r * r)),
        payload(static_cast<size_t>(r * 2 * r * kPayloadWords)),
        arrived(static_cast<size_t>(r)) {
    for (int k = 0; k < r; ++k) {
      for (uint32_t s = 0; s < 2; ++s) signal[k * 2 + s] = tc::phase_sign_initial_slot(first_counter, s, r);
      for (int src = 0; src < r; ++src) inbox[k * r + src] = first_epoch;
      arrived[k].store(0, std::memory_order_relaxed);
    }
  }
  uint64_t* message(int dst, uint64_t round, int src) {
    return &payload[((static_cast<size_t>(dst) * 2 + (round & 1)) * ranks + src) * kPayloadWords];
  }
  void fail(const std::string& why) {
    if (failure_claim.exchange(1) == 0) failure = why;
    failed.store(true);
  }
};

uint64_t stamp(uint64_t round, int src, int word) {
  return (round << 16) ^ (static_cast<uint64_t>(src) << 8) ^ static_cast<uint64_t>(word) ^ 0x5a5a000000000000ull;
}

// The rounds a rank plays; `Round` lets a test substitute a broken phase/sign rule.
struct Options {
  int ranks = 2;
  uint64_t rounds = 1000;
  uint32_t first_counter = 0;
  uint32_t first_epoch = 0;
  bool epoch_form = false;
  bool jitter = false;                 // random delays before arriving
  double timeout_s = 20.0;
};

// Spins politely: with more ranks than cores a rank that never yields starves the one it waits for.
template <typename Pred>
bool spin_until(Pred pred, World& w, Clock::time_point deadline) {
  for (uint32_t i = 0;; ++i) {
    if (pred()) return true;
    if (w.failed.load(std::memory_order_relaxed)) return false;
    if ((i & 63) == 63) {
      std::this_thread::yield();
      if (Clock::now() > deadline) return false;
    }
  }
}

// The protocol under test: the real one, or a mutant that a test expects to fail.
struct RealPhaseSign {
  using Round = tc::PhaseSignRound;
  static void signal(int32_t* slot, Round r) { tc::phase_sign_signal<cuda::thread_scope_system>(slot, r); }
  static bool arrived(const int32_t* slot, Round r, int32_t n, int32_t* seen) {
    return tc::phase_sign_arrived<cuda::thread_scope_system>(slot, r, n, seen);
  }
};

template <typename Protocol>
void play_rank(World& w, int me, const Options& o) {
  using Round = typename Protocol::Round;
  std::mt19937_64 rng(0x9e3779b97f4a7c15ull * static_cast<uint64_t>(me + 1));
  uint32_t counter = o.first_counter;
  uint32_t epoch = o.first_epoch;
  for (uint64_t round = 0; round < o.rounds && !w.failed.load(std::memory_order_relaxed); ++round) {
    // Data: a stamped message into every peer (ourselves included), plain stores.
    for (int dst = 0; dst < w.ranks; ++dst) {
      uint64_t* m = w.message(dst, round, me);
      for (int k = 0; k < kPayloadWords; ++k) m[k] = stamp(round, me, k);
    }
    if (o.jitter) {
      const uint64_t r = rng();
      if ((r & 1023) == 0) std::this_thread::sleep_for(std::chrono::microseconds(200 + (r >> 20) % 800));
      else if ((r & 15) == 0) std::this_thread::yield();
    }
    w.arrived[me].store(round + 1, std::memory_order_relaxed);
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(o.timeout_s));
    // Signal, then wait: the same calls, scopes and orders as cross_rank_barrier.cuh.
    bool ok = true;
    if (!o.epoch_form) {
      const Round rd{counter};
      for (int peer = 0; peer < w.ranks; ++peer) {
        Protocol::signal(&w.signal[peer * 2 + rd.phase()], rd);
      }
      int32_t seen = 0;
      ok = spin_until([&] { return Protocol::arrived(&w.signal[me * 2 + rd.phase()], rd, w.ranks, &seen); },
                      w, deadline);
      if (!ok && !w.failed.load()) {
        w.fail("rank " + std::to_string(me) + " timed out in round " + std::to_string(round) + ": counter=" +
               std::to_string(counter) + " signal=" + std::to_string(seen) + " target=" +
               std::to_string(rd.target(w.ranks)) + " phase=" + std::to_string(rd.phase()) + " sign=" +
               std::to_string(rd.sign()));
      }
      counter += 1;
    } else {
      const uint32_t e = epoch + 1;
      for (int peer = 0; peer < w.ranks; ++peer) {
        if (peer != me) tc::epoch_signal(&w.inbox[peer * w.ranks + me], e);
      }
      for (int src = 0; src < w.ranks && ok; ++src) {
        if (src == me) continue;
        uint32_t seen = 0;
        ok = spin_until([&] { return tc::epoch_arrived(&w.inbox[me * w.ranks + src], e, &seen); }, w, deadline);
        if (!ok && !w.failed.load()) {
          w.fail("rank " + std::to_string(me) + " timed out in round " + std::to_string(round) +
                 " waiting for rank " + std::to_string(src) + ": slot=" + std::to_string(seen) +
                 " epoch=" + std::to_string(e));
        }
      }
      epoch = e;
    }
    if (!ok) return;
    // No rank leaves a round before every rank has arrived at it.
    for (int p = 0; p < w.ranks; ++p) {
      const uint64_t a = w.arrived[p].load(std::memory_order_relaxed);
      if (a < round + 1) {
        w.fail("rank " + std::to_string(me) + " left round " + std::to_string(round) + " before rank " +
               std::to_string(p) + " arrived (it has arrived at " + std::to_string(a) + " rounds)");
        return;
      }
    }
    // Data before signal: every peer's message of this round is here, whole.
    for (int src = 0; src < w.ranks; ++src) {
      const uint64_t* m = w.message(me, round, src);
      for (int k = 0; k < kPayloadWords; ++k) {
        if (m[k] != stamp(round, src, k)) {
          char buf[256];
          std::snprintf(buf, sizeof buf, "rank %d round %llu: word %d from rank %d is %016llx, expected %016llx", me,
                        static_cast<unsigned long long>(round), k, src, static_cast<unsigned long long>(m[k]),
                        static_cast<unsigned long long>(stamp(round, src, k)));
          w.fail(buf);
          return;
        }
      }
    }
  }
}

template <typename Protocol = RealPhaseSign>
std::string run_model(const Options& o) {
  auto w = std::make_unique<World>(o.ranks, o.first_counter, o.first_epoch);
  std::vector<std::thread> threads;
  for (int r = 0; r < o.ranks; ++r) threads.emplace_back([&, r] { play_rank<Protocol>(*w, r, o); });
  for (auto& t : threads) t.join();
  if (w->failed) return w->failure;
  // No reset is ever needed: after n rounds the words are exactly what the start state predicts.
  const uint32_t counter = o.first_counter + static_cast<uint32_t>(o.rounds);
  const uint32_t epoch = o.first_epoch + static_cast<uint32_t>(o.rounds);
  for (int r = 0; r < o.ranks; ++r) {
    for (uint32_t s = 0; s < 2; ++s) {
      const int32_t want = o.epoch_form ? tc::phase_sign_initial_slot(o.first_counter, s, o.ranks)
                                        : tc::phase_sign_initial_slot(counter, s, o.ranks);
      if (w->signal[r * 2 + s] != want) {
        return "rank " + std::to_string(r) + " slot " + std::to_string(s) + " ends at " +
               std::to_string(w->signal[r * 2 + s]) + ", expected " + std::to_string(want);
      }
    }
    for (int src = 0; src < o.ranks; ++src) {
      const uint32_t want = (o.epoch_form && src != r) ? epoch : o.first_epoch;
      if (w->inbox[r * o.ranks + src] != want) {
        return "rank " + std::to_string(r) + " inbox[" + std::to_string(src) + "] ends at " +
               std::to_string(w->inbox[r * o.ranks + src]) + ", expected " + std::to_string(want);
      }
    }
  }
  return "";
}

// Fewer rounds where ranks outnumber cores (every round then needs a context switch per rank),
// and in the sanitizer build, which is ~10x slower.
uint64_t scaled_rounds(uint64_t full, int ranks) {
#if defined(TILECAST_TSAN)
  full /= 20;
#endif
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return ranks <= static_cast<int>(cores) ? full : full / (4 * static_cast<uint64_t>(ranks));
}

}  // namespace

// Distinct names for the sanitizer build: both binaries register their cases with CTest.
#if defined(TILECAST_TSAN)
#define MODEL_SUITE CommBarrierModelTsan
#else
#define MODEL_SUITE CommBarrierModel
#endif

TEST(MODEL_SUITE, PhaseSignMillionRoundsTwoRanks) {
  Options o;
  o.ranks = 2;
  o.rounds = scaled_rounds(1'000'000, 2);
  EXPECT_EQ(run_model(o), "");
}

TEST(MODEL_SUITE, EpochMillionRoundsTwoRanks) {
  Options o;
  o.ranks = 2;
  o.epoch_form = true;
  o.rounds = scaled_rounds(1'000'000, 2);
  EXPECT_EQ(run_model(o), "");
}

TEST(MODEL_SUITE, BothFormsThreeAndFourRanksWithJitter) {
  for (int ranks : {3, 4}) {
    for (bool epoch : {false, true}) {
      Options o;
      o.ranks = ranks;
      o.epoch_form = epoch;
      o.jitter = true;
      o.rounds = scaled_rounds(400'000, ranks);
      EXPECT_EQ(run_model(o), "") << ranks << " ranks, " << (epoch ? "epoch" : "phase/sign");
    }
  }
}

TEST(MODEL_SUITE, CountersWrapAround2To32) {
  for (bool epoch : {false, true}) {
    Options o;
    o.ranks = 3;
    o.epoch_form = epoch;
    o.first_counter = 0xFFFFFFFFu - 5;  // wraps in round 6
    o.first_epoch = 0xFFFFFFFFu - 5;
    o.rounds = 64;
    EXPECT_EQ(run_model(o), "") << (epoch ? "epoch" : "phase/sign");
  }
}

TEST(MODEL_SUITE, AnyStartCounterWorks) {
  // Every residue of the low two bits: the initial slots must match the first rounds' needs.
  for (uint32_t start = 0; start < 8; ++start) {
    Options o;
    o.ranks = 2;
    o.first_counter = start;
    o.rounds = 40;
    EXPECT_EQ(run_model(o), "") << "start counter " << start;
  }
}

// A phase/sign rule with the sign taken from the wrong bit (a mask slip of the kind that hung our
// first emulation at barrier #5): round 2 adds to slot 0 again instead of draining it, the slot
// reaches 2R and never R, and the model must catch it within the first 8 barriers.
struct WrongSignBit {
  struct Round {
    uint32_t counter;
    uint32_t phase() const { return counter & 1u; }
    uint32_t sign() const { return (counter >> 2) & 1u; }
    int32_t target(int32_t n) const { return sign() ? 0 : n; }
  };
  static void signal(int32_t* slot, Round r) {
    cuda::atomic_ref<int32_t, cuda::thread_scope_system>(*slot).fetch_add(r.sign() ? -1 : 1, cuda::memory_order_release);
  }
  static bool arrived(const int32_t* slot, Round r, int32_t n, int32_t* seen) {
    *seen = cuda::atomic_ref<int32_t, cuda::thread_scope_system>(*const_cast<int32_t*>(slot)).load(cuda::memory_order_acquire);
    return *seen == r.target(n);
  }
};

TEST(MODEL_SUITE, WrongSignMaskIsCaught) {
  Options o;
  o.ranks = 2;
  o.rounds = 16;
  o.timeout_s = 0.5;
  const std::string failure = run_model<WrongSignBit>(o);
  ASSERT_NE(failure, "") << "a broken sign bit went unnoticed";
  EXPECT_NE(failure.find("timed out in round 2"), std::string::npos) << failure;
  std::printf("caught as expected: %s\n", failure.c_str());
}
