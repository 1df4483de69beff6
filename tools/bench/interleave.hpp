// The order of the interleaved timing loop (timing.hpp, time_interleaved): which function runs at
// each position of a round. Pure arithmetic, tested on the CPU.
//
// In the plain order every round runs f0, f1, ..., so each function always follows the same one:
// tilecast's auto call always runs right after the cuBLAS variants. Balanced, the rounds follow a
// Williams design: round 0 runs f0, f1, f(n-1), f2, f(n-2), ..., and round r adds r to each index
// (mod n). For even n every function then follows every other function exactly once in n rounds;
// for odd n, rounds n..2n-1 repeat rounds 0..n-1 reversed, which balances the pairs over 2n
// rounds. (The flush between two runs stays; what it balances is the kernel before the flush.)
//
// What it does not balance is the rest of a function's surroundings: in the design the function
// two places before f is always f - 1 or f + 1, and the half of the period in which f sits at an
// even place is fixed. Those mattered: on 128x576x7168 auto (function 1) ran 6-8% behind its own
// forced twin (function 2) in four loops of two periods, and the twin itself 5% slower in one
// half of every period than in the other (bench/results/2026-12-04-h200-sweep-rounds.md). So with
// a nonzero `relabel` seed each period gives the functions fresh labels, a permutation drawn from
// the seed and the period's number: every period keeps the design's pairs, and the rest of the
// surroundings varies from period to period.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace tilecast::bench {

// Relabeling (below) handles loops of up to this many functions (a sweep's default limit is 48
// configs, beside auto and a few cuBLAS variants); larger ones keep the design's own labels.
inline constexpr size_t kMaxRelabeled = 128;

// The rounds after which the balanced order repeats.
inline size_t balanced_period(size_t n) { return n % 2 ? 2 * n : n; }

// The rounds a balanced loop of `n` functions runs for at least `iters`: whole periods, so that
// every function follows every other equally often. (Twenty rounds of a 14-function sweep ran a
// period and 6 rounds more, in which some predecessors came twice and others not at all; what ran
// before a call moved small rows' times by 2-6%: bench/results/2026-12-01-h200-order.md.)
inline size_t balanced_rounds(size_t iters, size_t n) {
  if (n < 2) return iters;
  const size_t period = balanced_period(n);
  return (iters + period - 1) / period * period;
}

// The rounds a loop runs for at least `iters` and, where `min_loop_ms` > 0, for as many as make
// it last that long at `round_ms` a round (as the warm-up rounds took), capped at kMaxRounds.
// Short rows need the extra rounds: 28 rounds of a 12-config sweep had auto 5.6-7.1% behind its
// own forced twin on 128x576x7168 (13 us a call) in two loops, 210 rounds 0.8-1.3%
// (bench/results/2026-12-04-h200-sweep-rounds.md).
inline constexpr size_t kMaxRounds = 100000;
inline size_t rounds_for_min_loop(size_t iters, double min_loop_ms, double round_ms) {
  if (!(min_loop_ms > 0) || !(round_ms > 0)) return iters;
  const double wanted = std::ceil(min_loop_ms / round_ms);
  return std::max(iters, wanted >= static_cast<double>(kMaxRounds) ? kMaxRounds : static_cast<size_t>(wanted));
}

// splitmix64's step: the labels' random source (fixed, so that a seed names one order everywhere,
// scripts included).
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The label of design slot `slot` in period `period`: a Fisher-Yates shuffle of 0..n-1 drawn from
// `relabel` and the period (0: no relabeling).
inline size_t period_label(size_t slot, size_t period, size_t n, uint64_t relabel) {
  if (relabel == 0) return slot;
  uint64_t state = relabel ^ (0x5851f42d4c957f2dull * (period + 1));
  size_t labels[kMaxRelabeled];
  for (size_t i = 0; i < n; ++i) labels[i] = i;
  for (size_t i = n - 1; i > 0; --i) std::swap(labels[i], labels[splitmix64(state) % (i + 1)]);
  return labels[slot];
}

// A timed loop's labels come from its problem's input seed (in the JSON), so that its order can
// be rebuilt; 1 for a seed of 0, which would mean the design's own labels.
inline uint64_t relabel_seed(uint64_t input_seed) { return input_seed ? input_seed : 1; }

// The function at position `pos` (0..n-1) of round `round` of `n` functions; balanced with a
// nonzero `relabel`, each period's labels drawn afresh (up to kMaxRelabeled functions).
inline size_t interleaved_function(size_t round, size_t pos, size_t n, bool balanced, uint64_t relabel = 0) {
  if (!balanced || n < 2) return pos;
  const size_t period = balanced_period(n);
  const size_t r = round % period;
  const size_t p = r >= n ? n - 1 - pos : pos;  // the odd-n second half runs reversed
  const size_t first_row = p == 0 ? 0 : p % 2 ? (p + 1) / 2 : n - p / 2;
  const size_t slot = (first_row + r % n) % n;
  return n <= kMaxRelabeled ? period_label(slot, round / period, n, relabel) : slot;
}

// Position of function `fn` within round `round`: interleaved_function's inverse.
inline size_t interleaved_position(size_t round, size_t fn, size_t n, bool balanced, uint64_t relabel = 0) {
  for (size_t pos = 0; pos < n; ++pos)
    if (interleaved_function(round, pos, n, balanced, relabel) == fn) return pos;
  return fn;  // not reached: every round is a permutation
}

}  // namespace tilecast::bench
