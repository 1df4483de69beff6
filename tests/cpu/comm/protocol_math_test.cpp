// The arithmetic of the comm headers, played out on the CPU with every arrival order we can
// afford: the grid sync's bit flip, the phase/sign slots from any start counter, the epoch's
// wrap-safe comparison, the symmetric map, the channel layout. This file also proves the
// device headers compile as plain host C++ (-Wall -Wextra).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "tilecast/device/comm/comm.cuh"

namespace tc = tilecast::comm;

TEST(CommGridSyncArithmetic, BitFlipsExactlyWhenTheLastCtaArrives) {
  std::mt19937 rng(7);
  for (uint32_t n : {1u, 2u, 3u, 7u, 64u, 132u, 264u, 1024u}) {
    uint32_t counter = 0;
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    for (int round = 0; round < 40; ++round) {
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<uint32_t> before(n);
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t cta = order[k];
        const tc::GridGroup g{nullptr, n, cta};
        before[cta] = counter;
        counter += g.arrival_increment();
        const bool last = k + 1 == n;
        // No CTA that has arrived may see its round complete before the last arrival.
        for (uint32_t j = 0; j <= k; ++j) {
          ASSERT_EQ(tc::grid_round_done(before[order[j]], counter), last)
              << "n=" << n << " round " << round << " after " << k + 1 << " arrivals";
        }
      }
      ASSERT_EQ(counter & 0x7FFFFFFFu, 0u) << "low bits must return to 0, n=" << n;
    }
  }
}

TEST(CommPhaseSignArithmetic, SlotsFollowFromAnyStartCounter) {
  // Sequential play (every rank adds, then every rank checks): the target is met in each round
  // and the slots return to the initial pattern, from start counters around 0 and 2^32.
  for (int32_t ranks : {1, 2, 3, 8, 72}) {
    for (uint32_t start : {0u, 1u, 2u, 3u, 0xFFFFFFF9u, 0xFFFFFFFCu, 0xFFFFFFFFu}) {
      int32_t slot[2] = {tc::phase_sign_initial_slot(start, 0, ranks), tc::phase_sign_initial_slot(start, 1, ranks)};
      tc::PhaseSignRound round{start};
      for (int k = 0; k < 24; ++k, round = round.next()) {
        for (int32_t r = 0; r < ranks; ++r) tc::phase_sign_signal(&slot[round.phase()], round);
        int32_t seen = 0;
        ASSERT_TRUE(tc::phase_sign_arrived(&slot[round.phase()], round, ranks, &seen))
            << "ranks=" << ranks << " start=" << start << " round " << k << " slot=" << seen;
        ASSERT_GE(slot[0], 0);
        ASSERT_LE(slot[0], ranks);
      }
      EXPECT_EQ(slot[0], tc::phase_sign_initial_slot(round.counter, 0, ranks));
      EXPECT_EQ(slot[1], tc::phase_sign_initial_slot(round.counter, 1, ranks));
    }
  }
}

TEST(CommPhaseSignArithmetic, PartialArrivalsNeverMeetTheTarget) {
  for (int32_t ranks : {2, 4, 8}) {
    for (uint32_t start = 0; start < 8; ++start) {
      int32_t slot[2] = {tc::phase_sign_initial_slot(start, 0, ranks), tc::phase_sign_initial_slot(start, 1, ranks)};
      const tc::PhaseSignRound round{start};
      for (int32_t r = 0; r + 1 < ranks; ++r) {
        tc::phase_sign_signal(&slot[round.phase()], round);
        int32_t seen = 0;
        EXPECT_FALSE(tc::phase_sign_arrived(&slot[round.phase()], round, ranks, &seen))
            << ranks << " ranks, start " << start << ", " << r + 1 << " arrived";
      }
    }
  }
}

TEST(CommEpochArithmetic, ReachedIsWrapSafe) {
  EXPECT_TRUE(tc::epoch_reached(5, 5));
  EXPECT_TRUE(tc::epoch_reached(6, 5));
  EXPECT_FALSE(tc::epoch_reached(4, 5));
  EXPECT_TRUE(tc::epoch_reached(0, 0xFFFFFFFFu));   // the writer wrapped first
  EXPECT_TRUE(tc::epoch_reached(1, 0xFFFFFFFFu));
  EXPECT_FALSE(tc::epoch_reached(0xFFFFFFFFu, 0));  // one behind across the wrap
  EXPECT_FALSE(tc::epoch_reached(0xFFFFFFF0u, 3));
  uint32_t slot = 0xFFFFFFFEu;
  for (uint32_t e = 0xFFFFFFFFu, k = 0; k < 4; ++k, ++e) {
    uint32_t seen = 0;
    EXPECT_FALSE(tc::epoch_arrived(&slot, e, &seen)) << "epoch " << e;
    tc::epoch_signal(&slot, e);
    EXPECT_TRUE(tc::epoch_arrived(&slot, e, &seen)) << "epoch " << e;
  }
}

TEST(CommSymmetricMap, MapsBetweenRegions) {
  const tc::SymmetricMap m{0x7f0000000000ull, 1ull << 21, 2, 4};
  char* local = static_cast<char*>(m.local());
  EXPECT_EQ(reinterpret_cast<uint64_t>(local), 0x7f0000000000ull + 2 * (1ull << 21));
  char* p = local + 1000;
  EXPECT_EQ(reinterpret_cast<uint64_t>(m.map(p, 0)), 0x7f0000000000ull + 1000);
  EXPECT_EQ(reinterpret_cast<uint64_t>(m.map(p, 3)), 0x7f0000000000ull + 3 * (1ull << 21) + 1000);
  EXPECT_EQ(m.map(p, 2), p);
  EXPECT_TRUE(m.owns(p, 16));
  EXPECT_TRUE(m.owns(local, 1ull << 21));
  EXPECT_FALSE(m.owns(local, (1ull << 21) + 1));
  EXPECT_FALSE(m.owns(local - 1, 1));
  EXPECT_FALSE(m.owns(local + (1ull << 21), 1));
  EXPECT_EQ(m.as_rank(1).local(), m.region(1));
}

TEST(CommBarrierLayout, InitialBlockAndChannelPointers) {
  for (int32_t ranks : {1, 2, 8, 64}) {
    const uint64_t bytes = tc::BarrierLayout::bytes(ranks);
    EXPECT_EQ(bytes % tc::BarrierLayout::kAlign, 0u);
    EXPECT_GE(bytes, tc::BarrierLayout::kInbox + 4ull * ranks);
    std::vector<uint32_t> block(bytes / 4, 0xDEADBEEFu);
    tc::barrier_initial_block(block.data(), ranks, 0xFFFFFFFEu, 0xFFFFFFF0u);
    const tc::SymmetricMap m{reinterpret_cast<uint64_t>(block.data()), bytes, 0, ranks};
    const tc::BarrierState s = tc::BarrierState::at(m, 0);
    EXPECT_EQ(*s.grid_counter, 0u);
    EXPECT_EQ(*s.phase_counter, 0xFFFFFFFEu);
    EXPECT_EQ(*s.epoch, 0xFFFFFFF0u);
    EXPECT_EQ(s.signal[0], tc::phase_sign_initial_slot(0xFFFFFFFEu, 0, ranks));
    EXPECT_EQ(s.signal[1], tc::phase_sign_initial_slot(0xFFFFFFFEu, 1, ranks));
    for (int32_t r = 0; r < ranks; ++r) EXPECT_EQ(s.inbox[r], 0xFFFFFFF0u);
    // Remotely written words do not share a 128-byte line with the locally written ones.
    EXPECT_GE(reinterpret_cast<char*>(s.signal) - reinterpret_cast<char*>(s.epoch), 120);
  }
  // Counter 0xFFFFFFFE has sign 1 in slot 0: the slot starts full.
  EXPECT_EQ(tc::phase_sign_initial_slot(0xFFFFFFFEu, 0, 4), 4);
  EXPECT_EQ(tc::phase_sign_initial_slot(0xFFFFFFFEu, 1, 4), 4);
  EXPECT_EQ(tc::phase_sign_initial_slot(0u, 0, 4), 0);
  EXPECT_EQ(tc::phase_sign_initial_slot(1u, 0, 4), 4);  // slot 0's next use is round 2: sign 1
}
