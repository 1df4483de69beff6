#include "random_problem.hpp"

#include <algorithm>
#include <sstream>

namespace tilecast::test {

std::string OwnedProblem::describe() const {
  static const char* names[] = {"normal", "batched", "m-grouped contiguous", "m-grouped masked", "k-grouped"};
  std::ostringstream s;
  s << names[static_cast<int>(problem.type)] << " m=" << problem.m << " n=" << problem.n << " k=" << problem.k
    << " groups=" << problem.num_groups;
  if (problem.type == GemmType::kMGroupedContiguous)
    s << (problem.contiguous_layout == ContiguousLayout::kOffsets ? " offsets" : " row-index");
  if (!data.empty() && data.size() <= 40) {
    s << " data=[";
    for (size_t i = 0; i < data.size(); ++i) s << (i ? "," : "") << data[i];
    s << "]";
  }
  return s.str();
}

std::vector<ShapeAndType> every_shape_and_type() {
  std::vector<ShapeAndType> all;
  for (const ClusterShape& cluster : kClusterShapes)
    for (GemmType type : kGemmTypes) all.push_back({cluster, type});
  return all;
}

TileConfig ProblemGenerator::config(const ClusterShape& cluster) {
  TileConfig c;
  // Row-index layouts keep a block inside one expert's aligned run.
  const uint32_t block_ms[] = {64, 128};
  const uint32_t block_ns[] = {64, 128, 256};
  const uint32_t block_ks[] = {32, 64};
  const uint32_t swizzles[] = {1, 2, 3, 8};
  c.block_m = pick(block_ms);
  c.block_n = pick(block_ns);
  c.block_k = pick(block_ks);
  c.cluster = cluster;
  c.swizzle = pick(swizzles);
  c.multicast_a = coin(0.8);
  c.multicast_b = coin(0.8);
  return c;
}

uint32_t ProblemGenerator::size_near_blocks(uint32_t block, uint32_t max_blocks) {
  const uint32_t blocks = uniform(1, max_blocks);
  switch (uniform(0, 4)) {
    case 0: return blocks * block;                   // whole blocks
    case 1: return blocks * block + 1;               // one row into a new block
    case 2: return blocks * block - 1;               // one short of whole
    case 3: return uniform(1, block);                // a single partial block
    default: return uniform(1, blocks * block);      // anything
  }
}

std::vector<uint32_t> ProblemGenerator::strained_sizes(uint32_t groups, uint32_t block_m) {
  std::vector<uint32_t> sizes;
  const uint32_t giant = uniform(0, groups - 1);
  for (uint32_t g = 0; g < groups; ++g) {
    if (g == giant && coin(0.5)) {
      sizes.push_back(uniform(12, 40) * block_m + uniform(0, block_m - 1));  // one giant among small ones
      continue;
    }
    switch (uniform(0, 4)) {
      case 0: sizes.push_back(0); break;                                   // empty expert
      case 1: sizes.push_back(uniform(1, block_m - 1)); break;             // smaller than a block
      case 2: sizes.push_back(uniform(1, 3) * block_m); break;             // 1-3 whole blocks: edges inside clusters
      case 3: sizes.push_back(uniform(1, 3) * block_m + uniform(1, block_m - 1)); break;
      default: sizes.push_back(uniform(1, 6 * block_m)); break;
    }
  }
  return sizes;
}

std::unique_ptr<OwnedProblem> ProblemGenerator::make_grouped(GemmType type, const TileConfig& c) {
  auto op = std::make_unique<OwnedProblem>();
  GemmProblem& p = op->problem;
  p.type = type;
  p.n = size_near_blocks(c.block_n, 6);
  p.k = size_near_blocks(c.block_k, 4);
  p.num_groups = uniform(1, 12);
  const std::vector<uint32_t> sizes = strained_sizes(p.num_groups, c.block_m);
  switch (type) {
    case GemmType::kMGroupedContiguous:
      if (coin()) {
        p.contiguous_layout = ContiguousLayout::kOffsets;
        op->data.push_back(0);
        for (uint32_t rows : sizes) op->data.push_back(op->data.back() + static_cast<int32_t>(rows));
        p.m = std::max<uint32_t>(1, static_cast<uint32_t>(op->data.back()) + (coin(0.2) ? uniform(1, 100) : 0));
      } else {
        p.contiguous_layout = ContiguousLayout::kRowIndex;
        for (uint32_t g = 0; g < p.num_groups; ++g) {
          const uint32_t padded = ceil_div(sizes[g], kMGroupedRowAlignment) * kMGroupedRowAlignment;
          for (uint32_t r = 0; r < padded; ++r) op->data.push_back(r < sizes[g] ? static_cast<int32_t>(g) : -1);
        }
        if (op->data.empty() || coin(0.2)) op->data.insert(op->data.end(), kMGroupedRowAlignment, -1);
        p.m = static_cast<uint32_t>(op->data.size());
      }
      break;
    case GemmType::kMGroupedMasked: {
      uint32_t max_m = 1;
      for (uint32_t rows : sizes) max_m = std::max(max_m, rows);
      p.m = max_m + (coin() ? uniform(0, c.block_m) : 0);
      for (uint32_t rows : sizes) op->data.push_back(static_cast<int32_t>(rows));
      break;
    }
    default: {  // k-grouped: M blocks 1..7 (no multiple of 2 or 4 half the time), any K per group
      // that the kernel takes (multiples of kKGroupAlignment)
      p.type = GemmType::kKGroupedContiguous;
      p.m = uniform(1, 7) * c.block_m - (coin() ? uniform(0, c.block_m - 1) : 0);
      p.k = 0;
      for (uint32_t g = 0; g < p.num_groups; ++g) {
        const uint32_t kg = coin(0.2)   ? 0
                            : coin(0.5) ? uniform(1, 5) * c.block_k
                                        : uniform(1, 5 * c.block_k / kKGroupAlignment) * kKGroupAlignment;
        op->data.push_back(static_cast<int32_t>(kg));
        p.k += kg;
      }
      if (p.k == 0) p.k = 1;  // every group empty: D = 0 (or C); the total K of the tensors is 1
      break;
    }
  }
  p.group_data = op->data.data();
  return op;
}

std::unique_ptr<OwnedProblem> ProblemGenerator::make(GemmType type, uint32_t block_m, uint32_t block_n,
                                                     uint32_t block_k) {
  auto op = std::make_unique<OwnedProblem>();
  GemmProblem& p = op->problem;
  p.type = type;
  p.n = size_near_blocks(block_n, 14);
  p.k = size_near_blocks(block_k, 5);
  switch (type) {
    case GemmType::kNormal:
      p.m = size_near_blocks(block_m, 24);
      break;
    case GemmType::kBatched:
      p.m = size_near_blocks(block_m, 5);
      p.num_groups = uniform(1, 5);
      break;
    case GemmType::kMGroupedMasked: {
      p.num_groups = uniform(1, 8);
      p.m = size_near_blocks(block_m, 4);
      for (uint32_t g = 0; g < p.num_groups; ++g) {
        // Empty experts, experts smaller than a block, full experts, and now and then a count
        // above the buffer's rows (the scheduler clamps it).
        const uint32_t choice = uniform(0, 5);
        op->data.push_back(choice == 0 ? 0 : choice == 1 ? uniform(1, block_m - 1) : choice == 2 ? p.m
                           : choice == 3 ? p.m + uniform(1, 10) : uniform(0, p.m));
      }
      break;
    }
    case GemmType::kMGroupedContiguous: {
      p.num_groups = uniform(1, 8);
      std::vector<uint32_t> sizes;
      for (uint32_t g = 0; g < p.num_groups; ++g) {
        const uint32_t choice = uniform(0, 3);
        sizes.push_back(choice == 0 ? 0 : choice == 1 ? uniform(1, block_m - 1) : uniform(1, 3 * block_m + 7));
      }
      if (coin()) {
        p.contiguous_layout = ContiguousLayout::kOffsets;
        op->data.push_back(0);
        for (uint32_t s : sizes) op->data.push_back(op->data.back() + static_cast<int32_t>(s));
        p.m = static_cast<uint32_t>(op->data.back());
      } else {
        p.contiguous_layout = ContiguousLayout::kRowIndex;
        // Each expert's rows padded to the alignment with -1 rows; sometimes trailing padding.
        for (uint32_t g = 0; g < p.num_groups; ++g) {
          const uint32_t padded = ceil_div(sizes[g], kMGroupedRowAlignment) * kMGroupedRowAlignment;
          for (uint32_t r = 0; r < padded; ++r) op->data.push_back(r < sizes[g] ? static_cast<int32_t>(g) : -1);
        }
        if (coin(0.2))
          for (uint32_t r = 0; r < kMGroupedRowAlignment; ++r) op->data.push_back(-1);
        p.m = static_cast<uint32_t>(op->data.size());
      }
      break;
    }
    case GemmType::kKGroupedContiguous: {
      p.num_groups = uniform(1, 6);
      p.m = size_near_blocks(block_m, 5);
      p.k = 0;
      for (uint32_t g = 0; g < p.num_groups; ++g) {
        // A multiple of kKGroupAlignment, as the kernel requires (group_data_check.cuh).
        const uint32_t kg = coin(0.15) ? 0 : (size_near_blocks(block_k, 4) + kKGroupAlignment - 1) / kKGroupAlignment * kKGroupAlignment;
        op->data.push_back(static_cast<int32_t>(kg));
        p.k += kg;
      }
      break;
    }
  }
  p.group_data = op->data.empty() ? nullptr : op->data.data();
  return op;
}

}  // namespace tilecast::test
