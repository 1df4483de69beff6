#include "tilecast/plan/l2_reuse.hpp"

#include <algorithm>
#include <functional>
#include <list>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace tilecast::plan {
namespace {

constexpr uint64_t kBf16Bytes = 2;

// A block of an operand in L2: a unit's rows of A or columns of B, in one group, over one slice
// of K.
struct BlockKey {
  uint64_t group_and_unit;     // the group in the high half, the unit-row or unit-column in the low
  uint32_t operand_and_slice;  // 1 << 8 for B's blocks, 0 for A's; the slice of K in the low byte
  bool operator==(const BlockKey&) const = default;
};
struct BlockKeyHash {
  size_t operator()(const BlockKey& k) const {
    return std::hash<uint64_t>{}(k.group_and_unit * 0x9e3779b97f4a7c15ull ^ k.operand_and_slice);
  }
};

// One unit of the walk: its group, its place in the group's grid (in units), the rows of A and
// columns of B it reads, its group's K in `slices` slices of whole k-steps (kL2ReuseChunks, fewer
// where K has fewer steps; none for an empty k-group), and whether it walks them backwards
// (serpentine K).
struct WalkedUnit {
  uint32_t group, row, col, k;
  uint64_t rows, cols;
  uint64_t slice_cols;
  uint32_t slices;
  bool k_reverse;
};

// L2 as an LRU cache of operand blocks (a unit's rows of A or columns of B over one slice of K).
class LruBytes {
 public:
  explicit LruBytes(uint64_t capacity) : capacity_(capacity) {}

  // Touches block `key` of `bytes`; counts them as read from HBM where the block is not held.
  void touch(const BlockKey& key, uint64_t bytes) {
    if (const auto it = where_.find(key); it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second.first);
      return;
    }
    missed_ += bytes;
    order_.push_front(key);
    where_.emplace(key, std::make_pair(order_.begin(), bytes));
    held_ += bytes;
    while (held_ > capacity_ && !order_.empty()) {
      const auto victim = where_.find(order_.back());
      held_ -= victim->second.second;
      where_.erase(victim);
      order_.pop_back();
    }
  }

  uint64_t missed() const { return missed_; }

 private:
  uint64_t capacity_;
  uint64_t held_ = 0, missed_ = 0;
  std::list<BlockKey> order_;  // most recent first
  std::unordered_map<BlockKey, std::pair<std::list<BlockKey>::iterator, uint64_t>, BlockKeyHash> where_;
};

}  // namespace

double operand_hbm_bytes(const GemmProblem& problem, const TileConfig& schedule, uint32_t resident_units,
                         uint64_t l2_bytes, bool k_serpentine) {
  if (problem.k_splits != 1) throw std::invalid_argument("operand_hbm_bytes models unsplit walks only");
  const bool reads_group_data = problem.type == GemmType::kMGroupedContiguous ||
                                problem.type == GemmType::kMGroupedMasked ||
                                problem.type == GemmType::kKGroupedContiguous;
  if (reads_group_data && problem.group_data == nullptr)
    throw std::invalid_argument("operand_hbm_bytes walks a grouped problem by its group data: give host-side data");
  if (resident_units == 0) throw std::invalid_argument("operand_hbm_bytes needs at least one resident unit");
  const uint32_t unit_rows = schedule.unit_tiles_m() * schedule.block_m;
  const uint32_t unit_cols = schedule.unit_tiles_n() * schedule.block_n;
  // Each unit as the device's scheduler walks them, grid after grid (rank 0 of a unit's first
  // cluster sits at the unit's origin; with a row-index layout its tile names the expert).
  TileScheduler scheduler(problem, schedule, 0, k_serpentine ? resident_units : 0);
  std::vector<WalkedUnit> units;
  for (uint32_t u = 0; scheduler.seek(u); ++u) {
    const TileWork w = scheduler.work_of(0, 0);
    const GroupGrid& grid = scheduler.grid();
    const uint32_t row = w.m_block / schedule.unit_tiles_m(), col = w.n_block / schedule.unit_tiles_n();
    const uint32_t k_steps = ceil_div(grid.k, schedule.block_k);
    const uint32_t slice_steps = k_steps ? ceil_div(k_steps, kL2ReuseChunks) : 1;
    units.push_back({w.group, row, col, grid.k, std::min<uint64_t>(unit_rows, grid.rows - uint64_t{row} * unit_rows),
                     std::min<uint64_t>(unit_cols, problem.n - uint64_t{col} * unit_cols),
                     uint64_t{slice_steps} * schedule.block_k, ceil_div(k_steps, slice_steps), w.k_reverse});
  }
  LruBytes l2(operand_l2_bytes(l2_bytes));
  for (size_t first = 0; first < units.size(); first += resident_units) {
    const size_t end = std::min(units.size(), first + resident_units);
    for (uint32_t step = 0; step < kL2ReuseChunks; ++step) {
      for (size_t i = first; i < end; ++i) {
        const WalkedUnit& u = units[i];
        if (step >= u.slices) continue;
        const uint32_t c = u.k_reverse ? u.slices - 1 - step : step;  // the slice this step reads
        const uint64_t k_cols = std::min(u.slice_cols, u.k - uint64_t{c} * u.slice_cols);
        const uint64_t group = uint64_t{u.group} << 32;
        l2.touch({group | u.row, c}, u.rows * k_cols * kBf16Bytes);
        l2.touch({group | u.col, (1u << 8) | c}, u.cols * k_cols * kBf16Bytes);
      }
    }
  }
  return static_cast<double>(l2.missed());
}

}  // namespace tilecast::plan
