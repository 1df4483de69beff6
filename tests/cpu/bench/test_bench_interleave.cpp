// The timed loop's order (tools/bench/interleave.hpp): each round is a permutation of the
// functions, the plain order never changes, and in the balanced order every function follows
// every other one equally often within a period, so that none (tilecast's auto call) always
// follows the cuBLAS variants.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "interleave.hpp"

namespace tilecast::bench {
namespace {

TEST(BenchInterleave, EveryRoundRunsEachFunctionOnceAndTheInverseFindsIt) {
  for (const bool balanced : {false, true})
    for (size_t n = 1; n <= 12; ++n)
      for (size_t round = 0; round < 3 * n; ++round) {
        std::set<size_t> seen;
        for (size_t pos = 0; pos < n; ++pos) {
          const size_t fn = interleaved_function(round, pos, n, balanced);
          ASSERT_LT(fn, n);
          seen.insert(fn);
          EXPECT_EQ(interleaved_position(round, fn, n, balanced), pos) << n << " " << round;
        }
        EXPECT_EQ(seen.size(), n) << "round " << round << " of " << n << " is not a permutation";
      }
}

TEST(BenchInterleave, ThePlainOrderNeverChanges) {
  for (size_t round = 0; round < 7; ++round)
    for (size_t pos = 0; pos < 5; ++pos) EXPECT_EQ(interleaved_function(round, pos, 5, false), pos);
}

TEST(BenchInterleave, BalancedRoundsGiveEveryFunctionEveryPredecessorEquallyOften) {
  for (size_t n = 2; n <= 12; ++n) {
    const size_t period = balanced_period(n);
    EXPECT_EQ(period, n % 2 ? 2 * n : n);
    // Within rounds (the pair across a round's end has a flush and the next round's start between).
    std::map<std::pair<size_t, size_t>, size_t> follows;
    for (size_t round = 0; round < period; ++round)
      for (size_t pos = 1; pos < n; ++pos)
        ++follows[{interleaved_function(round, pos - 1, n, true), interleaved_function(round, pos, n, true)}];
    EXPECT_EQ(follows.size(), n * (n - 1)) << "every ordered pair of two functions occurs, n = " << n;
    for (const auto& [pair, count] : follows)
      EXPECT_EQ(count, period / n) << n << ": " << pair.first << " " << pair.second;
    // Round 0 starts with the plain order's first function: a single round stays as it was.
    EXPECT_EQ(interleaved_function(0, 0, n, true), 0u);
  }
}

TEST(BenchInterleave, RelabeledPeriodsKeepEveryPairOnceAndVaryTheRest) {
  constexpr uint64_t kSeed = 0x1234abcdull;
  for (size_t n = 2; n <= 16; ++n) {
    const size_t period = balanced_period(n);
    std::set<std::vector<size_t>> first_rounds;
    std::set<size_t> two_before_fn1;  // the function two places before function 1
    for (size_t p = 0; p < 8; ++p) {
      std::map<std::pair<size_t, size_t>, size_t> follows;
      for (size_t round = p * period; round < (p + 1) * period; ++round) {
        std::vector<size_t> order;
        for (size_t pos = 0; pos < n; ++pos) {
          const size_t fn = interleaved_function(round, pos, n, true, kSeed);
          ASSERT_LT(fn, n);
          order.push_back(fn);
          EXPECT_EQ(interleaved_position(round, fn, n, true, kSeed), pos);
          EXPECT_EQ(interleaved_function(round, pos, n, true, kSeed), fn) << "the same seed, the same order";
          if (pos >= 1) ++follows[{order[pos - 1], fn}];
          if (pos >= 2 && fn == 1) two_before_fn1.insert(order[pos - 2]);
        }
        EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), n) << "a permutation";
        if (round == p * period) first_rounds.insert(order);
      }
      EXPECT_EQ(follows.size(), n * (n - 1)) << "every ordered pair within period " << p << ", n = " << n;
      for (const auto& [pair, count] : follows) EXPECT_EQ(count, period / n);
    }
    if (n >= 4) {
      EXPECT_GT(first_rounds.size(), 1u) << "periods get fresh labels, n = " << n;
      // Unrelabeled, the function two places before f is always f - 1 or f + 1.
      EXPECT_GT(two_before_fn1.size(), 2u) << "n = " << n;
    }
  }
  // Seed 0: the design's own labels.
  for (size_t round = 0; round < 40; ++round)
    for (size_t pos = 0; pos < 14; ++pos)
      EXPECT_EQ(interleaved_function(round, pos, 14, true, 0), interleaved_function(round, pos, 14, true));
}

TEST(BenchInterleave, ABalancedLoopRunsWholePeriods) {
  EXPECT_EQ(balanced_rounds(20, 14), 28u) << "a sweep of 12 configs, auto and cuBLAS";
  EXPECT_EQ(balanced_rounds(20, 15), 30u);
  EXPECT_EQ(balanced_rounds(50, 2), 50u) << "auto against cuBLAS keeps its count";
  EXPECT_EQ(balanced_rounds(7, 1), 7u);
  for (size_t n = 2; n <= 16; ++n)
    for (size_t iters = 1; iters <= 40; ++iters) {
      const size_t rounds = balanced_rounds(iters, n), period = balanced_period(n);
      EXPECT_EQ(rounds % period, 0u) << n << " " << iters;
      EXPECT_GE(rounds, iters);
      EXPECT_LT(rounds - iters, period) << "the fewest whole periods";
    }
}

TEST(BenchInterleave, AMinimumLoopTimeAddsRoundsToShortRowsOnly) {
  EXPECT_EQ(rounds_for_min_loop(20, 0, 1.2), 20u) << "no minimum: --iters alone";
  EXPECT_EQ(rounds_for_min_loop(20, 250, 1.2), 209u) << "14 calls of ~85 us a round: 250 ms is 209 rounds";
  EXPECT_EQ(rounds_for_min_loop(20, 250, 40.0), 20u) << "a long row keeps --iters";
  EXPECT_EQ(rounds_for_min_loop(20, 250, 0), 20u) << "no warm-up pace: --iters";
  EXPECT_EQ(rounds_for_min_loop(20, 250, 1e-9), kMaxRounds) << "capped";
  // Balanced afterwards, the loop still runs whole periods.
  EXPECT_EQ(balanced_rounds(rounds_for_min_loop(20, 250, 1.2), 14), 210u);
}

}  // namespace
}  // namespace tilecast::bench
