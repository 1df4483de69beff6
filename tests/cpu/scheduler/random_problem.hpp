// Random GEMM problems for the scheduler's property tests: every gemm type, sizes that leave
// partial tiles and partial clusters, empty experts, experts smaller than a block, k-groups whose
// tile count is not a multiple of the cluster size.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast::test {

inline constexpr GemmType kGemmTypes[] = {GemmType::kNormal, GemmType::kBatched, GemmType::kMGroupedContiguous,
                                          GemmType::kMGroupedMasked, GemmType::kKGroupedContiguous};
inline constexpr GemmType kGroupedTypes[] = {GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked,
                                             GemmType::kKGroupedContiguous};

// What the property tests sweep: every cluster shape tilecast builds with every gemm type.
struct ShapeAndType {
  ClusterShape cluster;
  GemmType type;
};
std::vector<ShapeAndType> every_shape_and_type();

// A problem and the host memory its group_data points into.
struct OwnedProblem {
  GemmProblem problem;
  std::vector<int32_t> data;
  std::string describe() const;
};

class ProblemGenerator {
 public:
  explicit ProblemGenerator(uint64_t seed) : rng_(seed) {}

  uint32_t uniform(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_); }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T, size_t N>
  const T& pick(const T (&items)[N]) { return items[uniform(0, N - 1)]; }

  // A problem of the given type sized for blocks of block_m x block_n x block_k.
  std::unique_ptr<OwnedProblem> make(GemmType type, uint32_t block_m, uint32_t block_n, uint32_t block_k);

  // A grouped problem (m-grouped contiguous in either layout, masked, or k-grouped) made to strain
  // the scheduler at group edges, for blocks of c: expert sizes that put expert edges inside
  // clusters (1 to 3 blocks, so that a cluster of 4 or 2x2 along M spans two experts in the
  // row-index layout), one giant expert among tiny and empty ones, experts smaller than a block,
  // and k-groups (zero, not multiples of block_k) over a tile count that is no multiple of the
  // cluster's.
  std::unique_ptr<OwnedProblem> make_grouped(GemmType type, const TileConfig& c);

  // A tile config for `cluster`: block sizes, swizzle, and multicast of A and B mostly on.
  TileConfig config(const ClusterShape& cluster);

  // A size that is often a multiple of `block`, often one off, sometimes tiny.
  uint32_t size_near_blocks(uint32_t block, uint32_t max_blocks);

  std::mt19937_64& rng() { return rng_; }

 private:
  // Rows of each of `groups` experts, the mix make_grouped describes.
  std::vector<uint32_t> strained_sizes(uint32_t groups, uint32_t block_m);

  std::mt19937_64 rng_;
};

}  // namespace tilecast::test
