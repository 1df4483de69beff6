// The band height (unit-rows) of a plan whose operands do not fit in L2: the one whose walk reads
// the fewest operand bytes from HBM in the LRU model of l2_reuse.hpp. A wave of G resident units
// walks K together, so what it reads stays in L2 only while the wave's rows and columns over all of
// K fit there: past that each wave reads its own again, and a band h units tall, holding the wave
// as h x G/h units, reads fewest at h = sqrt(G x unit columns / unit rows); where K is short, a band
// sweeps its rows of A along N from L2, and a taller band reads B fewer times. Candidates: the
// powers of two from kLowestModelledBand up to the grid's height, that square root and the whole
// height; kDefaultSwizzle unless one reads kBandMinSaving less. Measured on the H200
// (bench/results/2026-12-04-h200-last-wave.md, run C): 8192^3 with 128x256 tiles on 132 SMs (16:
// 1.23 GB in the model) read 1.23 GB from HBM against 1.49 at 8, and at the power cap a GEMM took
// 1.2% less time and 1.5-3% less energy than at 8; 4096x32768x512 and 4096x7168x2048 ran 0.4-1.6%
// faster against cuBLAS at 32 than at 8 (bench/results/2026-12-05-h200-serpentine-l2-share.md).
// Where bytes are many and K long the time hardly follows: 16384^3 read 14.3 GB at band 8 and
// 15.5-22.5 at 16, and the two ran within 0.7% at the cap (the same page). Unsplit static plans of
// more than one wave, of every GEMM type: a grouped or batched problem walks its groups' grids one
// after another, played on the planner's surrogate of its group data (grouped_surrogate.hpp), and a
// band is a band of each group's grid; elsewhere kDefaultSwizzle. (The eight grouped suite rows
// that the half-of-L2 share moved ran within -0.5% to +0.8% of their old band against cuBLAS,
// bench/results/2026-12-05-h200-grouped-bands-l2-drift.md; batched bands are the model's alone.)
#include <algorithm>
#include <cmath>
#include <vector>

#include "planner.hpp"
#include "tilecast/plan/grouped_surrogate.hpp"
#include "tilecast/plan/l2_reuse.hpp"

namespace tilecast::plan {
namespace {
// The share of kDefaultSwizzle's HBM bytes another band must save to be taken.
constexpr double kBandMinSaving = 0.05;
// The lowest band weighed (where the grid is taller): the model met the H200's bytes within 3% at
// bands 4, 8 and 16 and undercounted band 1's by a fifth (2.31 against 2.90 GB on 8192^3: a wave
// over four rows of tiles drifts apart in K, which lockstep waves do not), so a band below this
// could win on paper and lose on the chip.
constexpr uint32_t kLowestModelledBand = 4;

}  // namespace

uint32_t band_height(const GemmPlan& plan, const GemmProblem& played, const DeviceFacts& f) {
  const GemmProblem p = swapped_if(played, plan.main.kernel.swap_ab);
  if (plan.k_splits > 1 || plan.companion || operand_bytes(p) <= static_cast<double>(operand_l2_bytes(f.l2_bytes)))
    return kDefaultSwizzle;
  const TileConfig& t = plan.schedule;
  const uint32_t resident_units = plan.main.clusters;
  if (max_units(p, t) <= resident_units) return kDefaultSwizzle;  // one wave
  // The tallest grid, in units: the problem's, or with a grid per group the group's.
  uint64_t rows = p.m;
  if (has_group_grids(p)) {
    rows = 0;
    for (const GroupSize& g : group_sizes(p)) rows = std::max(rows, g.rows);
  }
  const uint32_t units_m = ceil_div(ceil_div(static_cast<uint32_t>(rows), t.block_m), t.unit_tiles_m());
  const auto hbm_bytes_at = [&](uint32_t band) {
    TileConfig banded = t;
    banded.swizzle = band;
    return operand_hbm_bytes(p, banded, resident_units, f.l2_bytes, plan.main.kernel.k_serpentine);
  };
  const uint32_t tallest = std::min(units_m, kMaxSwizzle);
  const double unit_rows = static_cast<double>(t.unit_tiles_m()) * t.block_m;
  const double unit_cols = static_cast<double>(t.unit_tiles_n()) * t.block_n;
  std::vector<uint32_t> bands{tallest, static_cast<uint32_t>(std::lround(std::sqrt(resident_units * unit_cols / unit_rows)))};
  for (uint32_t h = kLowestModelledBand; h < tallest; h *= 2) bands.push_back(h);
  const double at_default = hbm_bytes_at(kDefaultSwizzle);
  uint32_t best = kDefaultSwizzle;
  double best_bytes = at_default;
  std::vector<uint32_t> tried;
  for (uint32_t h : bands) {
    h = std::clamp<uint32_t>(h, std::min(kLowestModelledBand, tallest), tallest);
    // A band at least as tall as the grid walks it as any other such band does; each is played once.
    if (std::min(h, units_m) == std::min(kDefaultSwizzle, units_m) || std::ranges::find(tried, h) != tried.end())
      continue;
    tried.push_back(h);
    const double bytes = hbm_bytes_at(h);
    if (bytes < best_bytes) {
      best = h;
      best_bytes = bytes;
    }
  }
  return best_bytes < at_default * (1 - kBandMinSaving) ? best : kDefaultSwizzle;
}

}  // namespace tilecast::plan
