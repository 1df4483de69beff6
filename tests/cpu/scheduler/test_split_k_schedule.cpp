// Split-K in the scheduler: every output element of every batch is covered exactly once per slice
// (the simulator's coverage check, with the partial results as outputs), the slices of each tile
// cover K exactly once, and multicast and barrier balance hold as for any other grid.
#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "random_problem.hpp"
#include "test_helpers.hpp"
#include "tilecast/device/kernels/gemm_sm90/coordinates.cuh"
#include "tilecast/plan/simulator.hpp"

namespace tilecast::test {
namespace {

using plan::LaunchSpec;
using plan::SimOptions;
using plan::simulate;

// The m values the brief names (one row, a few rows, one past a 64- and 128-row block) and K
// values that are not multiples of 64 or hold fewer k-steps than slices.
constexpr uint32_t kEdgeMs[] = {1, 7, 65, 129};
constexpr uint32_t kEdgeKs[] = {1, 63, 64, 65, 100, 191, 1000, 7168};
constexpr uint32_t kMaxSplits = 16;

GemmProblem split_problem(GemmType type, uint32_t m, uint32_t n, uint32_t k, uint32_t batches, uint32_t splits) {
  GemmProblem p = dense(m, n, k);
  p.type = type;
  p.num_groups = type == GemmType::kBatched ? batches : 1;
  p.k_splits = splits;
  return p;
}

// Walks every unit of the problem as cluster 0 of a single-cluster launch would (every CTA of it)
// and records, per (batch, output tile), the K columns each slice reads.
struct KCoverage {
  // (group, row, col) -> list of (k_begin, k_end, d_group)
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>> ranges;
};

KCoverage walk(const GemmProblem& p, const TileConfig& c) {
  KCoverage cov;
  for_each_valid_work(p, c, [&](const TileWork& w) {
    cov.ranges[{w.group, w.row, w.col}].emplace_back(w.k_begin, w.k_end, w.d_group);
    // Every CTA of the cluster runs the slice's k-steps, phantom or not.
    EXPECT_EQ(w.num_k_steps, ceil_div(w.k_end - w.k_begin, c.block_k));
  });
  return cov;
}

// The slices of every tile lie end to end over [0, K): slice s's columns start where slice s-1's
// end, each but the last is a whole number of k-steps, and each writes partial result
// s * groups + group.
void expect_slices_cover_k(const GemmProblem& p, const TileConfig& c, const std::string& what) {
  const KCoverage cov = walk(p, c);
  const uint32_t groups = p.type == GemmType::kBatched ? p.num_groups : 1;
  const uint64_t tiles = uint64_t{ceil_div(p.m, c.block_m)} * ceil_div(p.n, c.block_n) * groups;
  ASSERT_EQ(cov.ranges.size(), tiles) << what;
  for (const auto& [tile, slices] : cov.ranges) {
    ASSERT_EQ(slices.size(), p.k_splits) << what;
    uint32_t next = 0;
    for (uint32_t s = 0; s < slices.size(); ++s) {
      const auto [begin, end, d_group] = slices[s];
      EXPECT_EQ(begin, next) << what << " slice " << s;
      EXPECT_EQ(d_group, s * groups + std::get<0>(tile)) << what << " slice " << s;
      if (end != p.k) {
        EXPECT_EQ((end - begin) % c.block_k, 0u) << what << " slice " << s << " is not whole k-steps";
      }
      next = end;
    }
    EXPECT_EQ(next, p.k) << what << ": the slices end short of K";
  }
}

std::string describe(const GemmProblem& p, const TileConfig& c, uint32_t clusters) {
  return std::string(p.type == GemmType::kBatched ? "batched " : "dense ") + std::to_string(p.num_groups) + "x" +
         std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " splits " +
         std::to_string(p.k_splits) + " block " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) +
         " cluster " + std::to_string(c.cluster.m) + "x" + std::to_string(c.cluster.n) + " clusters " +
         std::to_string(clusters);
}

TEST(SplitKSchedule, SliceArithmetic) {
  // 7168 columns in 3 slices: 112 k-steps -> 38, 38, 36.
  EXPECT_EQ(split_k_slice_cols(7168, 3, 64), 38u * 64);
  EXPECT_EQ(split_k_slice(7168, 3, 64, 2).begin, 76u * 64);
  EXPECT_EQ(split_k_slice(7168, 3, 64, 2).size, 7168u - 76 * 64);
  // 100 columns (2 k-steps) in 3 slices: 64, 36 and an empty third slice at K.
  EXPECT_EQ(split_k_slice(100, 3, 64, 0).size, 64u);
  EXPECT_EQ(split_k_slice(100, 3, 64, 1).begin, 64u);
  EXPECT_EQ(split_k_slice(100, 3, 64, 1).size, 36u);
  EXPECT_EQ(split_k_slice(100, 3, 64, 2).begin, 100u);
  EXPECT_EQ(split_k_slice(100, 3, 64, 2).size, 0u);
}

// The brief's edge shapes with every cluster shape and a range of split counts, checked two ways:
// the simulator (coverage once per partial result, masks, balance, lockstep) and the K walk.
TEST(SplitKSchedule, EdgeShapesEveryClusterShape) {
  ProblemGenerator gen(20261201);
  uint64_t cases = 0;
  for (const ClusterShape& cs : kClusterShapes)
    for (GemmType type : {GemmType::kNormal, GemmType::kBatched})
      for (uint32_t m : kEdgeMs)
        for (uint32_t k : kEdgeKs) {
          TileConfig c = gen.config(cs);
          const uint32_t n = gen.size_near_blocks(c.block_n, 5);
          const GemmProblem p = split_problem(type, m, n, k, gen.uniform(2, 3), gen.uniform(2, kMaxSplits));
          const uint32_t clusters = gen.uniform(1, 40);
          const std::string what = describe(p, c, clusters);
          const LaunchSpec launch{c, clusters};
          SimOptions o;
          o.stages = gen.uniform(2, 6);
          const plan::SimResult r = simulate(p, {&launch, 1}, o);
          ASSERT_TRUE(r.ok()) << what << "\n" << listing(r.violations);
          expect_slices_cover_k(p, c, what);
          ++cases;
        }
  EXPECT_EQ(cases, std::size(kClusterShapes) * 2 * std::size(kEdgeMs) * std::size(kEdgeKs));
}

// Random shapes: 6 cluster shapes x 2 types x 150 problems.
TEST(SplitKSchedule, RandomShapesHoldEveryInvariant) {
  ProblemGenerator gen(12);
  for (const ClusterShape& cs : kClusterShapes)
    for (GemmType type : {GemmType::kNormal, GemmType::kBatched})
      for (int i = 0; i < 150; ++i) {
        TileConfig c = gen.config(cs);
        const uint32_t m = gen.coin(0.3) ? gen.uniform(1, 300) : gen.size_near_blocks(c.block_m, 6);
        const uint32_t n = gen.size_near_blocks(c.block_n, 6);
        const uint32_t k = gen.coin(0.3) ? gen.uniform(1, 600) : gen.uniform(1, 9000);
        const GemmProblem p = split_problem(type, m, n, k, gen.uniform(1, 4), gen.uniform(2, kMaxSplits));
        const uint32_t clusters = gen.uniform(1, 40);
        const std::string what = describe(p, c, clusters);
        const LaunchSpec launch{c, clusters};
        SimOptions o;
        o.stages = gen.uniform(2, 6);
        o.consumer_warps = c.block_m == 64 ? 4 : 8;
        const plan::SimResult r = simulate(p, {&launch, 1}, o);
        ASSERT_TRUE(r.ok()) << what << "\n" << listing(r.violations);
        expect_slices_cover_k(p, c, what);
      }
}

// The kernel's arithmetic replayed on the CPU: every CTA's k-steps load the A and B boxes at the
// coordinates the kernel's producer computes (TileCoords), with the TMA's zero fill past the
// tensors' edges; each tile's sums go to the workspace where its epilogue stores them (TileCoords::d,
// clipped to m x n); the slices are then summed in order, as the reduce kernel does. Small
// integers keep every sum exact, so the result must equal the naive product exactly.
template <GemmType kType>
void expect_exact_product(const GemmProblem& p, const TileConfig& c, std::mt19937_64& rng, const std::string& what) {
  const uint32_t groups = p.num_groups;
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<int64_t> a(uint64_t{groups} * p.m * p.k), b(uint64_t{groups} * p.n * p.k);
  for (int64_t& x : a) x = small(rng);
  for (int64_t& x : b) x = small(rng);
  const auto at = [&](const std::vector<int64_t>& t, uint32_t rows, int64_t g, int64_t r, int64_t col) -> int64_t {
    if (r < 0 || r >= rows || col < 0 || col >= p.k) return 0;  // the TMA's zero fill
    return t[(uint64_t(g) * rows + r) * p.k + col];
  };
  // The workspace: [k_splits][groups][m][n], NaN-free sentinel to spot unwritten elements.
  constexpr int64_t kUnwritten = INT64_MIN;
  std::vector<int64_t> ws(uint64_t{p.k_splits} * groups * p.m * p.n, kUnwritten);
  for_each_valid_work(p, c, [&](const TileWork& w) {
    std::vector<int64_t> acc(uint64_t{c.block_m} * c.block_n, 0);
    for (uint32_t kk = 0; kk < w.num_k_steps; ++kk) {
      int32_t ca[3], cb[3];
      TileCoords<kType>::a(w, kk, c.block_k, /*mn_major=*/false, /*box=*/0, ca);  // NT: K-major, one box
      TileCoords<kType>::b(w, kk, c.block_k, /*mn_major=*/false, /*box=*/0, cb);
      for (uint32_t r = 0; r < c.block_m; ++r)
        for (uint32_t col = 0; col < c.block_n; ++col)
          for (uint32_t j = 0; j < c.block_k; ++j)
            acc[r * c.block_n + col] +=
                at(a, p.m, ca[2], ca[1] + int64_t{r}, ca[0] + int64_t{j}) * at(b, p.n, cb[2], cb[1] + int64_t{col}, cb[0] + int64_t{j});
    }
    int32_t cd[3];
    TileCoords<kType>::d(w, 0, 0, cd);
    for (uint32_t r = 0; r < c.block_m; ++r)
      for (uint32_t col = 0; col < c.block_n; ++col) {
        const int64_t row = cd[1] + int64_t{r}, column = cd[0] + int64_t{col};
        if (row >= p.m || column >= p.n) continue;  // the TMA store clips
        int64_t& dst = ws[(uint64_t(cd[2]) * p.m + row) * p.n + column];
        ASSERT_EQ(dst, kUnwritten) << what << ": element written twice";
        dst = acc[r * c.block_n + col];
      }
  });
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t r = 0; r < p.m; ++r)
      for (uint32_t col = 0; col < p.n; ++col) {
        int64_t sum = 0, want = 0;
        for (uint32_t sl = 0; sl < p.k_splits; ++sl) {
          const int64_t v = ws[((uint64_t{sl} * groups + g) * p.m + r) * p.n + col];
          ASSERT_NE(v, kUnwritten) << what << ": slice " << sl << " never wrote (" << g << ", " << r << ", " << col << ")";
          sum += v;
        }
        for (uint32_t j = 0; j < p.k; ++j) want += at(a, p.m, g, r, j) * at(b, p.n, g, col, j);
        ASSERT_EQ(sum, want) << what << " at (" << g << ", " << r << ", " << col << ")";
      }
}

TEST(SplitKSchedule, KernelCoordinatesGiveTheExactProduct) {
  ProblemGenerator gen(99);
  std::mt19937_64 rng(5);
  int cases = 0;
  for (const ClusterShape& cs : kClusterShapes)
    for (int i = 0; i < 6; ++i) {
      TileConfig c;
      c.block_m = gen.coin() ? 64 : 128;
      c.block_n = gen.coin() ? 64 : 128;
      c.block_k = 64;
      c.cluster = cs;
      c.swizzle = gen.coin() ? 1 : 8;
      const bool batched = i % 2 == 1;
      const uint32_t m = gen.pick(kEdgeMs), n = gen.uniform(1, 300), k = gen.uniform(1, 700);
      const GemmProblem p = split_problem(batched ? GemmType::kBatched : GemmType::kNormal, m, n, k, 2,
                                          gen.uniform(2, 12));
      const std::string what = describe(p, c, 1);
      if (batched)
        expect_exact_product<GemmType::kBatched>(p, c, rng, what);
      else
        expect_exact_product<GemmType::kNormal>(p, c, rng, what);
      if (HasFatalFailure()) return;
      ++cases;
    }
  EXPECT_EQ(cases, 36);
}

// One slice is the unsplit schedule: the same tiles, K and outputs.
TEST(SplitKSchedule, OneSliceIsTheUnsplitSchedule) {
  const TileConfig c = config(2, 1);
  GemmProblem p = split_problem(GemmType::kBatched, 300, 500, 1000, 3, 1);
  const KCoverage cov = walk(p, c);
  for (const auto& [tile, slices] : cov.ranges) {
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_EQ(std::get<0>(slices[0]), 0u);
    EXPECT_EQ(std::get<1>(slices[0]), 1000u);
    EXPECT_EQ(std::get<2>(slices[0]), std::get<0>(tile)) << "D's group is the batch";
  }
}

}  // namespace
}  // namespace tilecast::test
