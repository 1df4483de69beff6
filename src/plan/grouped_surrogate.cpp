#include "tilecast/plan/grouped_surrogate.hpp"

#include <algorithm>
#include <cmath>

namespace tilecast::plan {
namespace {

// n split into `parts` nearly equal shares, the first n % parts one larger.
uint32_t share(uint32_t n, uint32_t parts, uint32_t i) { return n / parts + (i < n % parts ? 1 : 0); }

uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// How far a masked GEMM's expert counts spread around the caller's expected M, either way.
constexpr double kMaskedSpread = 0.3;

}  // namespace

PlanningProblem planning_problem(const GemmDesc& desc) {
  PlanningProblem out;
  out.sizes = desc.problem;
  out.sizes.group_data = nullptr;
  const GemmProblem& p = out.sizes;
  const uint32_t groups = std::max(p.num_groups, 1u);
  std::vector<int32_t>& data = out.data;
  switch (p.type) {
    case GemmType::kMGroupedContiguous:
      if (p.contiguous_layout == ContiguousLayout::kOffsets) {
        data.push_back(0);
        for (uint32_t g = 0; g < groups; ++g) data.push_back(data.back() + static_cast<int32_t>(share(p.m, groups, g)));
      } else {
        const uint32_t runs = ceil_div(p.m, kMGroupedRowAlignment);
        data.resize(p.m);
        for (uint32_t r = 0; r < p.m; ++r)
          data[r] = static_cast<int32_t>(uint64_t{r / kMGroupedRowAlignment} * groups / runs);
      }
      break;
    case GemmType::kMGroupedMasked: {
      // The expected-M hint is a mean: experts' counts spread around it (routing is uneven), so an
      // expert's last row block is as often partial as full, and a cluster along M then holds a
      // block with no rows (a phantom CTA). Counts all equal to the hint, a multiple of 128 as
      // hints often are, would hide that: 2x1 was planned on 6 experts of ~1024 rows and ran
      // 7-11% slower than 1x1 (bench/results/2026-12-01-h200-grouped.md). So the surrogate
      // spreads them evenly over hint x [1 - s, 1 + s), s = kMaskedSpread: the spread of the
      // masks DeepGEMM tests with (U(0.7, 1.3), also the bench's).
      const double expected = desc.expected_m ? std::min(desc.expected_m, p.m) : p.m;
      for (uint32_t g = 0; g < groups; ++g) {
        const double f = 1.0 - kMaskedSpread + 2.0 * kMaskedSpread * (g + 0.5) / groups;
        data.push_back(static_cast<int32_t>(std::min<double>(p.m, std::max(0.0, std::round(expected * f)))));
      }
      break;
    }
    case GemmType::kKGroupedContiguous: {
      // In whole kKGroupAlignment columns, as every k-group's size must be (the kernel traps on
      // others, and the scheduler would round them down: planned work the call never has).
      const uint32_t units = p.k / kKGroupAlignment;
      for (uint32_t g = 0; g < groups; ++g)
        data.push_back(static_cast<int32_t>(share(units, groups, g) * kKGroupAlignment));
      break;
    }
    default:
      break;
  }
  return out;
}

uint64_t max_units(const GemmProblem& p, const TileConfig& c) {
  const uint64_t units_n = cdiv(cdiv(p.n, c.block_n), c.unit_tiles_n());
  const uint64_t units_m = cdiv(cdiv(p.m, c.block_m), c.unit_tiles_m());  // of one grid of p.m rows
  switch (p.type) {
    case GemmType::kNormal:
      return uint64_t{p.k_splits / c.k_cluster} * units_m * units_n;  // a grid per split-K slice (a cluster's slices share one)
    case GemmType::kMGroupedContiguous:
      if (p.contiguous_layout == ContiguousLayout::kRowIndex) return units_m * units_n;  // one grid
      {
        const uint64_t u = uint64_t{c.block_m} * c.unit_tiles_m();
        const uint64_t holding = std::min<uint64_t>(p.num_groups, p.m);
        return (p.m + holding * (u - 1)) / u * units_n;
      }
    default:  // batched (per slice with split-K), masked (max_m rows each), k-grouped: a grid of p.m rows per group
      return uint64_t{p.k_splits / c.k_cluster} * p.num_groups * units_m * units_n;
  }
}

std::vector<GroupSize> group_sizes(const GemmProblem& p) {
  std::vector<GroupSize> out;
  const auto clamped = [](int32_t v, uint32_t limit) { return static_cast<uint64_t>(std::clamp<int64_t>(v, 0, limit)); };
  switch (p.type) {
    case GemmType::kNormal:
      out.push_back({p.m, p.k});
      break;
    case GemmType::kBatched:
      out.assign(p.num_groups, {p.m, p.k});
      break;
    case GemmType::kMGroupedMasked:
      for (uint32_t g = 0; g < p.num_groups; ++g) out.push_back({clamped(p.group_data[g], p.m), p.k});
      break;
    case GemmType::kMGroupedContiguous:
      out.assign(p.num_groups, {0, p.k});
      if (p.contiguous_layout == ContiguousLayout::kOffsets) {
        for (uint32_t g = 0; g < p.num_groups; ++g) {
          const uint64_t begin = clamped(p.group_data[g], p.m), end = clamped(p.group_data[g + 1], p.m);
          out[g].rows = end > begin ? end - begin : 0;
        }
      } else {
        for (uint32_t r = 0; r < p.m; ++r)
          if (p.group_data[r] >= 0 && static_cast<uint32_t>(p.group_data[r]) < p.num_groups) ++out[p.group_data[r]].rows;
      }
      break;
    case GemmType::kKGroupedContiguous: {
      uint64_t left = p.k;
      for (uint32_t g = 0; g < p.num_groups; ++g) {
        const uint64_t k = clamped(p.group_data[g], static_cast<uint32_t>(left));
        left -= k;
        out.push_back({p.m, k});
      }
      break;
    }
  }
  return out;
}

}  // namespace tilecast::plan
