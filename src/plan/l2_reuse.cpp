#include "tilecast/plan/l2_reuse.hpp"

#include <algorithm>
#include <list>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace tilecast::plan {
namespace {

// L2 as an LRU cache of operand blocks (a unit's rows of A or columns of B over one slice of K).
class LruBytes {
 public:
  explicit LruBytes(uint64_t capacity) : capacity_(capacity) {}

  // Touches block `key` of `bytes`; counts them as read from HBM where the block is not held.
  void touch(uint64_t key, uint64_t bytes) {
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
  std::list<uint64_t> order_;  // most recent first
  std::unordered_map<uint64_t, std::pair<std::list<uint64_t>::iterator, uint64_t>> where_;
};

constexpr uint64_t kBf16Bytes = 2;

}  // namespace

double operand_hbm_bytes(const GemmProblem& problem, const TileConfig& schedule, uint32_t resident_units,
                         uint64_t l2_bytes) {
  if (problem.type != GemmType::kNormal || problem.k_splits != 1)
    throw std::invalid_argument("operand_hbm_bytes models dense unsplit walks only");
  if (resident_units == 0) throw std::invalid_argument("operand_hbm_bytes needs at least one resident unit");
  const uint32_t unit_rows = schedule.unit_tiles_m() * schedule.block_m;
  const uint32_t unit_cols = schedule.unit_tiles_n() * schedule.block_n;
  // Each unit's place in the grid, in units, as the device's scheduler walks them (rank 0 of a
  // unit's first cluster sits at the unit's origin).
  TileScheduler scheduler(problem, schedule, 0);
  std::vector<std::pair<uint32_t, uint32_t>> units;
  for (uint32_t u = 0; scheduler.seek(u); ++u) {
    const TileWork w = scheduler.work_of(0, 0);
    units.emplace_back(w.m_block / schedule.unit_tiles_m(), w.n_block / schedule.unit_tiles_n());
  }
  const uint32_t k_steps = ceil_div(problem.k, schedule.block_k);
  const uint32_t chunk_steps = ceil_div(k_steps, kL2ReuseChunks);
  const uint32_t chunks = ceil_div(k_steps, chunk_steps);
  LruBytes l2(l2_bytes);
  for (size_t first = 0; first < units.size(); first += resident_units) {
    const size_t end = std::min(units.size(), first + resident_units);
    for (uint32_t c = 0; c < chunks; ++c) {
      const uint64_t k_cols = std::min<uint64_t>(uint64_t{chunk_steps} * schedule.block_k,
                                                 problem.k - uint64_t{c} * chunk_steps * schedule.block_k);
      for (size_t i = first; i < end; ++i) {
        const auto [row, col] = units[i];
        const uint64_t rows = std::min<uint64_t>(unit_rows, problem.m - uint64_t{row} * unit_rows);
        const uint64_t cols = std::min<uint64_t>(unit_cols, problem.n - uint64_t{col} * unit_cols);
        // Keys: operand in the top bit, the unit's row or column, the slice in the low byte.
        l2.touch((uint64_t{row} << 8) | c, rows * k_cols * kBf16Bytes);
        l2.touch((uint64_t{1} << 63) | (uint64_t{col} << 8) | c, cols * k_cols * kBf16Bytes);
      }
    }
  }
  return static_cast<double>(l2.missed());
}

}  // namespace tilecast::plan
