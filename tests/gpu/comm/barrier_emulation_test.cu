// The cross-rank barrier on one GPU, with R = 2, 4, 8 ranks emulated as concurrently running
// cooperative kernels over R regions of one allocation: payload correctness over 100,000 rounds
// per configuration, counters that wrap, a rank that never arrives (the diagnostic, not a hang),
// a skew just under the timeout, and a short single-kernel run for compute-sanitizer.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "emulated_world.cuh"
#include "tilecast/comm/barrier.hpp"

namespace tc = tilecast::comm;
using tc::BarrierForm;
using tc::testing::EmulatedWorld;
using tc::testing::LaunchMode;
using tc::testing::RunConfig;

namespace {

const char* form_name(BarrierForm f) { return f == BarrierForm::kPhaseSign ? "phase/sign" : "epoch"; }

// Rounds scale down under compute-sanitizer or when asked (TILECAST_TEST_ROUNDS).
uint32_t rounds_or(uint32_t dflt) {
  if (const char* v = std::getenv("TILECAST_TEST_ROUNDS")) return static_cast<uint32_t>(std::atoi(v));
  return dflt;
}

// The counters every rank must show after `rounds` barriers from the given start.
void expect_words_after(EmulatedWorld& w, BarrierForm form, uint32_t first, uint32_t rounds) {
  for (int r = 0; r < w.ranks(); ++r) {
    const auto words = w.words(r);
    EXPECT_EQ(words.grid_counter & 0x7FFFFFFFu, 0u) << "rank " << r;
    if (form == BarrierForm::kPhaseSign) {
      const uint32_t c = first + rounds;
      EXPECT_EQ(words.phase_counter, c) << "rank " << r;
      EXPECT_EQ(words.signal[0], tc::phase_sign_initial_slot(c, 0, w.ranks())) << "rank " << r;
      EXPECT_EQ(words.signal[1], tc::phase_sign_initial_slot(c, 1, w.ranks())) << "rank " << r;
    } else {
      EXPECT_EQ(words.epoch, first + rounds) << "rank " << r;
      for (int s = 0; s < w.ranks(); ++s) {
        EXPECT_EQ(words.inbox[s], s == r ? first : first + rounds) << "rank " << r << " slot " << s;
      }
    }
  }
}

}  // namespace

TEST(CommEmulatedRanks, HundredThousandRoundsEachRankCountAndForm) {
  const uint32_t rounds = rounds_or(100'000);
  for (int ranks : {2, 4, 8}) {
    EmulatedWorld world(ranks, 4, 16);
    for (BarrierForm form : {BarrierForm::kPhaseSign, BarrierForm::kEpoch}) {
      world.reset(0, 0);
      RunConfig c;
      c.form = form;
      c.ctas_per_rank = 4;
      c.words = 16;
      c.rounds = rounds;
      const auto r = world.run(c);
      ASSERT_EQ(r.error, cudaSuccess) << cudaGetErrorString(r.error) << " (" << ranks << " ranks, " << form_name(form) << ")";
      EXPECT_EQ(r.stats.errors, 0u) << tc::testing::describe(r.stats);
      // every rank's 4 CTAs check 16 words from each of `ranks` sources per round
      EXPECT_EQ(r.stats.checked_lo, static_cast<uint32_t>(uint64_t{rounds} * ranks * ranks * 4 * 16));
      expect_words_after(world, form, 0, rounds);
      std::printf("%d ranks x 4 CTAs, %-10s: %u rounds, %.3f us per round (kernel per rank, payload checked)\n", ranks,
                  form_name(form), rounds, 1000.0 * r.ms / rounds);
    }
  }
}

TEST(CommEmulatedRanks, OneKernelForAllRanks) {
  const uint32_t rounds = rounds_or(20'000);
  for (int ranks : {2, 8}) {
    EmulatedWorld world(ranks, 2, 64);
    for (BarrierForm form : {BarrierForm::kPhaseSign, BarrierForm::kEpoch}) {
      world.reset(0, 0);
      RunConfig c;
      c.form = form;
      c.mode = LaunchMode::kOneKernel;
      c.ctas_per_rank = 2;
      c.words = 64;
      c.rounds = rounds;
      const auto r = world.run(c);
      ASSERT_EQ(r.error, cudaSuccess) << cudaGetErrorString(r.error);
      EXPECT_EQ(r.stats.errors, 0u) << tc::testing::describe(r.stats);
      expect_words_after(world, form, 0, rounds);
    }
  }
}

TEST(CommEmulatedRanks, ShortRunForSanitizers) {
  // Small enough for compute-sanitizer (which serialises kernels: one kernel plays every rank).
  EmulatedWorld world(4, 2, 32);
  for (BarrierForm form : {BarrierForm::kPhaseSign, BarrierForm::kEpoch}) {
    world.reset(0, 0);
    RunConfig c;
    c.form = form;
    c.mode = LaunchMode::kOneKernel;
    c.ctas_per_rank = 2;
    c.words = 32;
    c.rounds = 16;
    c.timeout_ns = 120ull * 1000 * 1000 * 1000;  // instrumented code is slow
    const auto r = world.run(c);
    ASSERT_EQ(r.error, cudaSuccess) << cudaGetErrorString(r.error);
    EXPECT_EQ(r.stats.errors, 0u) << tc::testing::describe(r.stats);
    expect_words_after(world, form, 0, 16);
  }
}

TEST(CommEmulatedRanks, CountersWrapPast2To32) {
  for (BarrierForm form : {BarrierForm::kPhaseSign, BarrierForm::kEpoch}) {
    EmulatedWorld world(4, 2, 8);
    const uint32_t first = 0xFFFFFFFFu - 9;  // wraps in the 10th round
    world.reset(first, first);
    RunConfig c;
    c.form = form;
    c.ctas_per_rank = 2;
    c.rounds = 64;
    const auto r = world.run(c);
    ASSERT_EQ(r.error, cudaSuccess) << cudaGetErrorString(r.error) << " " << form_name(form);
    EXPECT_EQ(r.stats.errors, 0u) << tc::testing::describe(r.stats);
    expect_words_after(world, form, first, 64);
    EXPECT_LT(world.words(0).phase_counter + world.words(0).epoch, 200u) << "both counters wrapped to small values";
  }
}

TEST(CommEmulatedRanks, SkewJustUnderTheTimeoutPasses) {
  for (BarrierForm form : {BarrierForm::kPhaseSign, BarrierForm::kEpoch}) {
    EmulatedWorld world(4, 2, 8);
    RunConfig c;
    c.form = form;
    c.ctas_per_rank = 2;
    c.rounds = 16;
    c.timeout_ns = 400'000'000;   // 400 ms
    c.skew_rank = 3;
    c.skew_round = 9;
    c.skew_ns = 250'000'000;      // rank 3 arrives 250 ms late in round 9
    const auto r = world.run(c);
    ASSERT_EQ(r.error, cudaSuccess) << cudaGetErrorString(r.error) << " " << form_name(form);
    EXPECT_EQ(r.stats.errors, 0u) << tc::testing::describe(r.stats);
    EXPECT_GT(r.ms, 250.0);
  }
}

// A rank that leaves after 8 barriers: the others must trap with the diagnostic at the 9th,
// within the (short) timeout, not hang. The trap kills the CUDA context, so this runs in a
// child process (gtest's threadsafe death tests re-execute this binary for the one test).
namespace {

[[noreturn]] void missing_rank_child(BarrierForm form) {
  ::dup2(2, 1);  // device printf goes to stdout; the death test reads stderr
  tc::TimeoutReport* report = nullptr;
  TC_CHECK_CUDA(cudaHostAlloc(&report, sizeof *report, cudaHostAllocMapped));
  std::memset(report, 0, sizeof *report);
  EmulatedWorld world(4, 2, 8);
  RunConfig c;
  c.form = form;
  c.ctas_per_rank = 2;
  c.rounds = 16;
  c.timeout_ns = 50'000'000;  // 50 ms
  c.stop_rank = 3;
  c.stop_after = 8;
  c.report = report;
  cudaError_t error = cudaSuccess;
  try {
    error = world.run(c).error;
  } catch (const std::exception& e) {  // a call after the launch may already see the trap
    std::fprintf(stderr, "child: %s\n", e.what());
    error = cudaErrorLaunchFailure;
  }
  // The host-visible record survives the trap; check it names what the printf names.
  const bool trapped = error != cudaSuccess;
  const tc::TimeoutReport& t = *report;
  const bool right_kind = t.kind == (form == BarrierForm::kPhaseSign ? tc::WaitKind::kPhaseSign : tc::WaitKind::kEpoch);
  const bool names_missing = form == BarrierForm::kPhaseSign ? t.missing_rank == -1 : t.missing_rank == 3;
  const bool fields = t.valid == 1 && right_kind && names_missing && t.rank >= 0 && t.rank < 3 && t.counter == 8 &&
                      t.num_ranks == 4 && t.waited_ns >= 50'000'000 && std::strcmp(t.tag, "test-rounds") == 0;
  std::fprintf(stderr, "child: sync returned '%s'; record valid=%u rank=%d missing=%d counter=%u waited=%llu ns\n",
               cudaGetErrorString(error), t.valid, t.rank, t.missing_rank, t.counter,
               static_cast<unsigned long long>(t.waited_ns));
  std::fflush(nullptr);
  std::_Exit(trapped && fields ? 3 : 1);  // no teardown of a context the trap has killed
}

}  // namespace

TEST(CommEmulatedRanksDeathTest, MissingRankGivesTheEpochDiagnostic) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(missing_rank_child(BarrierForm::kEpoch), ::testing::ExitedWithCode(3),
              "epoch barrier timed out after [0-9]+ ns: tag=test-rounds rank=[0-2] sm=[0-9]+ cta=[0-9]+ counter=8 "
              "observed=8 target=9 .*missing_rank=3 ranks=4");
}

TEST(CommEmulatedRanksDeathTest, MissingRankGivesThePhaseSignDiagnostic) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Round 8 (counter 8): phase 0, sign 0, so the slot climbs to 3 of 4 and stops there.
  EXPECT_EXIT(missing_rank_child(BarrierForm::kPhaseSign), ::testing::ExitedWithCode(3),
              "phase/sign barrier timed out after [0-9]+ ns: tag=test-rounds rank=[0-2] sm=[0-9]+ cta=[0-9]+ "
              "counter=8 observed=3 target=4 phase=0 sign=0 missing_rank=-1 ranks=4");
}
