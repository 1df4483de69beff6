#include "tilecast/plan/expected_tiles.hpp"

#include <algorithm>

namespace tilecast::plan {

bool per_group_output(const GemmProblem& p) {
  return p.type == GemmType::kBatched || p.type == GemmType::kMGroupedMasked ||
         p.type == GemmType::kKGroupedContiguous || p.k_splits > 1;
}

TileKey TileKey::of(const GemmProblem& p, const TileWork& w) {
  return {per_group_output(p) ? w.d_group : 0u, w.group, w.row, w.col, w.rows, w.cols};
}

std::vector<TileKey> expected_tiles(const GemmProblem& p, uint32_t block_m, uint32_t block_n) {
  std::vector<TileKey> tiles;
  // Tiles of rows [begin, end) of output `output`, owned by `group`.
  auto add_rows = [&](uint32_t output, uint32_t group, uint32_t begin, uint32_t end) {
    for (uint32_t row = begin; row < end; row += block_m)
      for (uint32_t col = 0; col < p.n; col += block_n)
        tiles.push_back({output, group, row, col, std::min(block_m, end - row), std::min(block_n, p.n - col)});
  };
  if (p.k_splits > 1) {
    // Split-K (dense and batched): each slice's partial result of each batch, slice-major, as
    // the workspace holds them.
    const uint32_t batches = p.type == GemmType::kBatched ? p.num_groups : 1u;
    for (uint32_t s = 0; s < p.k_splits; ++s)
      for (uint32_t g = 0; g < batches; ++g) add_rows(s * batches + g, g, 0, p.m);
    return tiles;
  }
  switch (p.type) {
    case GemmType::kNormal:
      add_rows(0, 0, 0, p.m);
      break;
    case GemmType::kBatched:
    case GemmType::kKGroupedContiguous:
      for (uint32_t g = 0; g < p.num_groups; ++g) add_rows(g, g, 0, p.m);
      break;
    case GemmType::kMGroupedMasked:
      for (uint32_t g = 0; g < p.num_groups; ++g)
        add_rows(g, g, 0, std::min<uint32_t>(p.m, static_cast<uint32_t>(std::max(p.group_data[g], 0))));
      break;
    case GemmType::kMGroupedContiguous:
      if (p.contiguous_layout == ContiguousLayout::kOffsets) {
        // Offsets clamped into [0, m] and non-decreasing, as the scheduler clamps them.
        const auto clamped = [&](uint32_t i) {
          return static_cast<uint32_t>(std::clamp<int64_t>(p.group_data[i], 0, p.m));
        };
        for (uint32_t g = 0; g < p.num_groups; ++g)
          add_rows(0, g, clamped(g), std::max(clamped(g + 1), clamped(g)));
      } else {
        // A block belongs to the expert of its first row; a block starting on padding is skipped.
        for (uint32_t row = 0; row < p.m; row += block_m) {
          const int32_t expert = p.group_data[row];
          if (expert >= 0 && static_cast<uint32_t>(expert) < p.num_groups)
            add_rows(0, static_cast<uint32_t>(expert), row, std::min(p.m, row + block_m));
        }
      }
      break;
  }
  return tiles;
}

}  // namespace tilecast::plan
