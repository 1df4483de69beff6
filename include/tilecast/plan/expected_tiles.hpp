// The output tiles a problem has, enumerated straight from the problem's definition and not
// through the scheduler, so that the simulator can check the scheduler against it.
#pragma once

#include <tuple>
#include <vector>

#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast::plan {

struct TileKey {
  // Which D: the group for per-group outputs (batched, masked, k-grouped), the partial result
  // (slice * groups + group) with split-K, else 0.
  uint32_t output = 0;
  uint32_t group = 0;
  uint32_t row = 0, col = 0;    // first row and column in D
  uint32_t rows = 0, cols = 0;  // rows and columns that belong to the tile

  std::tuple<uint32_t, uint32_t, uint32_t> key() const { return {output, row, col}; }
  static TileKey of(const GemmProblem& p, const TileWork& w);
};

// Whether D has one matrix per group.
bool per_group_output(const GemmProblem& p);

std::vector<TileKey> expected_tiles(const GemmProblem& p, uint32_t block_m, uint32_t block_n);

}  // namespace tilecast::plan
