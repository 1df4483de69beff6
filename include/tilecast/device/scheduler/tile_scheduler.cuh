// The cluster-aware persistent tile scheduler, one piece of logic for the kernel and the CPU
// simulator (no intrinsics: group data is read through a plain pointer).
//
// Work is cut in three levels:
//   tile    block_m x block_n outputs, computed by one CTA;
//   cluster cluster.m x cluster.n tiles computed together by the CTAs of one cluster, which may
//           share operands through TMA multicast;
//   unit    unit_m x unit_n tiles (a whole number of clusters): what a cluster claims at once,
//           by a static stride over units or from a global atomic counter. A cluster smaller
//           than the unit walks its clusters one after another (steps), so that launches with
//           different cluster shapes can split one problem between them.
//
// Every CTA of a cluster walks the same units and steps and runs the same number of k-steps in
// each: a CTA whose tile falls outside the problem (or on padding rows, or in an empty expert)
// still runs the k-steps as a phantom, loading and computing nothing, so that the empty barriers
// of its peers get the same arrivals in every round (see pipeline/ring_protocol.cuh). Multicast masks
// name only live CTAs that truly share the operand tile.
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/scheduler/cluster.cuh"
#include "tilecast/device/scheduler/problem.cuh"

namespace tilecast {

struct TileConfig {
  uint32_t block_m = 128, block_n = 128, block_k = 64;
  ClusterShape cluster{};
  // The claimed unit, in tiles; multiples of the cluster shape. 0 means one cluster.
  uint32_t unit_m = 0, unit_n = 0;
  // Units per band along M in the L2-friendly order: a band of `swizzle` unit-rows is swept
  // along N before the next band starts. 1 walks units row-major.
  uint32_t swizzle = 1;
  bool multicast_a = true;  // CTAs with the same rows may share A
  bool multicast_b = true;  // CTAs with the same columns may share B
  // Split-K across the cluster (GemmKernelSpec::k_cluster): the launch's clusters are k_cluster
  // copies of `cluster` along K. Copy s (launch rank / cluster.size() == s) computes slice s of the
  // same tiles, so the walk holds k_splits / k_cluster grids per group, not k_splits.
  uint32_t k_cluster = 1;

  TC_HOST_DEVICE constexpr uint32_t unit_tiles_m() const { return unit_m ? unit_m : cluster.m; }
  TC_HOST_DEVICE constexpr uint32_t unit_tiles_n() const { return unit_n ? unit_n : cluster.n; }
  // Clusters (steps) per unit.
  TC_HOST_DEVICE constexpr uint32_t steps_per_unit() const {
    return (unit_tiles_m() / cluster.m) * (unit_tiles_n() / cluster.n);
  }
};

// One group's tile grid. With split-K every (group, slice) pair has a grid of its own, walked
// slice-major: grid index = slice * groups + group, which is also the partial result it writes.
struct GroupGrid {
  uint32_t index = 0;       // position in the walk
  uint32_t group = 0;       // batch, expert or k-group
  uint32_t d_group = 0;     // D's group coordinate: the group, or with split-K the grid index
  uint32_t rows = 0;        // valid rows of the group
  uint32_t row_base = 0;    // the group's first row in A's and D's row space (kOffsets); else 0
  uint32_t k = 0;           // the group's K
  uint32_t k_base = 0;      // the group's first K column (kKGroupedContiguous); else 0
  uint32_t m_blocks = 0, n_blocks = 0;
  uint32_t units_m = 0, units_n = 0;
  uint32_t first_unit = 0;  // global index of the group's first unit
  TC_HOST_DEVICE constexpr uint32_t units() const { return units_m * units_n; }
};

// What one CTA does in one step.
struct TileWork {
  bool valid = false;        // false: a phantom, it runs the k-steps and computes nothing
  uint32_t group = 0;        // batch, expert or k-group (expert of the rows for kRowIndex)
  uint32_t d_group = 0;      // D's group coordinate: `group`, but with split-K the partial result's
  uint32_t m_block = 0;      // block coordinates in the group's grid
  uint32_t n_block = 0;
  uint32_t row = 0;          // first row in A's and D's row space (group-local for 3-D layouts)
  uint32_t rows = 0;         // rows that belong to this tile (<= block_m)
  uint32_t col = 0;          // first column of D
  uint32_t cols = 0;         // valid columns (<= block_n)
  uint32_t k_begin = 0;      // first K column read
  uint32_t k_end = 0;        // one past the last K column of the group
  uint32_t num_k_steps = 0;  // the cluster's k-steps in this step: the same on all its CTAs
  uint16_t a_mask = 0;       // cluster ranks that receive this CTA's A tile (self included)
  uint16_t b_mask = 0;       // cluster ranks that receive this CTA's B tile (self included)
  bool issue_a = false;      // this CTA issues the A load for a_mask (the lowest rank in it)
  bool issue_b = false;
  bool k_reverse = false;    // the unit walks its K backwards (serpentine K: TileScheduler's wave)

  // The k-block (of block_k columns from k_begin) that the tile's kk-th k-step loads.
  TC_HOST_DEVICE constexpr uint32_t k_step(uint32_t kk) const { return k_reverse ? num_k_steps - 1 - kk : kk; }
};

class TileScheduler {
 public:
  // `cta_rank`: the CTA's rank in its launch cluster (cluster.size() * k_cluster CTAs), split only
  // where k_cluster > 1 (a constant in the kernel), so that the other kernels' code is as it was.
  // `k_serpentine_wave` (serpentine K, GemmKernelSpec::k_serpentine): the units of a static
  // launch's wave w (units w x k_serpentine_wave up to the next wave's), w odd, walk their K
  // backwards; the launch's clusters, or 0: every unit walks K forwards. An argument, not a
  // TileConfig field, so that the kernels' parameters (GemmParams holds a TileConfig) keep their
  // layout, and a kernel without it its code (a constant 0 there).
  TC_HOST_DEVICE TileScheduler(const GemmProblem& problem, const TileConfig& config, uint32_t cta_rank,
                               uint32_t k_serpentine_wave = 0)
      : p_(problem),
        c_(config),
        rank_(config.k_cluster > 1 ? cta_rank % config.cluster.size() : cta_rank),
        k_rank_(config.k_cluster > 1 ? cta_rank / config.cluster.size() : 0),
        k_serpentine_wave_(k_serpentine_wave) {
    valid_ = load_group(0, 0, 0);
  }

  // Moves to unit `unit`. Units must be visited in increasing order: the group scan only moves
  // forward. Returns false when the problem has no such unit: the cluster's work is done.
  TC_HOST_DEVICE bool seek(uint32_t unit) {
    // Dense and batched grids (groups, split-K slices) all hold the same units: straight to the
    // unit's grid, not through every grid before it (a CTA of the last of 24 slices scanned 23,
    // each a few runtime divisions, before its first load). Only the grid's place in the walk
    // changes, not its size: a full load_group there spilled in a 4x1 dynamic-unit kernel with C.
    // (Grids with no units: the problem has none.)
    if (p_.type == GemmType::kNormal || p_.type == GemmType::kBatched) {
      if (valid_ && unit >= grid_.first_unit + grid_.units()) {
        const uint32_t units = grid_.units(), index = units != 0 ? unit / units : ~0u;
        valid_ = index < grids();
        if (valid_) place_grid(grid_, index, index * units);
      }
    } else {
      while (valid_ && unit >= grid_.first_unit + grid_.units())
        valid_ = load_group(grid_.index + 1, grid_.first_unit + grid_.units(), grid_.k_base + grid_.k);
    }
    if (!valid_) return false;
    place_unit(unit - grid_.first_unit);
    k_reverse_ = k_serpentine_wave_ != 0 && (unit / k_serpentine_wave_) % 2 == 1;
    return true;
  }

  TC_HOST_DEVICE constexpr uint32_t steps_per_unit() const { return c_.steps_per_unit(); }
  TC_HOST_DEVICE const GroupGrid& grid() const { return grid_; }

  // This CTA's work in step `step` of the current unit.
  TC_HOST_DEVICE TileWork work(uint32_t step) const { return work_of(step, rank_); }

  // The work of any CTA of the cluster in step `step`: each CTA can tell what its peers do.
  TC_HOST_DEVICE TileWork work_of(uint32_t step, uint32_t rank) const {
    const ClusterShape cs = c_.cluster;
    uint32_t m0 = 0, n0 = 0;
    cluster_origin(step, m0, n0);

    TileWork w = tile_at(m0 + cs.offset_m(rank), n0 + cs.offset_n(rank));
    bool any_valid = w.valid;
    uint16_t a_mask = 0, b_mask = 0;
    for (uint32_t r = 0; r < cs.size(); ++r) {
      const TileWork peer = r == rank ? w : tile_at(m0 + cs.offset_m(r), n0 + cs.offset_n(r));
      any_valid = any_valid || peer.valid;
      if (!w.valid || !peer.valid || peer.group != w.group || peer.d_group != w.d_group) continue;
      const uint16_t bit = static_cast<uint16_t>(1u << r);
      // Same rows of the same group: same A tile. Same columns of the same group: same B tile.
      if (cs.offset_m(r) == cs.offset_m(rank) && (c_.multicast_a || r == rank)) a_mask |= bit;
      if (cs.offset_n(r) == cs.offset_n(rank) && (c_.multicast_b || r == rank)) b_mask |= bit;
    }
    w.num_k_steps = any_valid ? ceil_div(grid_.k, c_.block_k) : 0;
    w.a_mask = a_mask;
    w.b_mask = b_mask;
    w.issue_a = w.valid && lowest_rank(a_mask) == rank;
    w.issue_b = w.valid && lowest_rank(b_mask) == rank;
    w.k_reverse = k_reverse_;
    return w;
  }

 private:
  // The unit's first tile, in the L2-friendly order: bands of `swizzle` unit-rows, each swept
  // along N. Worked out once per unit, in seek(), not in every step's work(): its
  // divisions are the scheduler's dearest arithmetic.
  TC_HOST_DEVICE void place_unit(uint32_t unit) {
    const uint32_t band_units = c_.swizzle * grid_.units_n;
    const uint32_t band = unit / band_units;
    const uint32_t in_band = unit % band_units;
    const uint32_t band_rows = cmin(c_.swizzle, grid_.units_m - band * c_.swizzle);
    unit_m0_ = (band * c_.swizzle + in_band % band_rows) * c_.unit_tiles_m();
    unit_n0_ = (in_band / band_rows) * c_.unit_tiles_n();
  }

  // Position of the current unit's step-th cluster, in tiles.
  TC_HOST_DEVICE void cluster_origin(uint32_t step, uint32_t& m0, uint32_t& n0) const {
    const uint32_t steps_m = c_.unit_tiles_m() / c_.cluster.m;
    // Most units are one cluster (one step): no division for them.
    uint32_t step_m = step, step_n = 0;
    if (step >= steps_m) {
      step_n = step / steps_m;
      step_m = step - step_n * steps_m;
    }
    m0 = unit_m0_ + step_m * c_.cluster.m;
    n0 = unit_n0_ + step_n * c_.cluster.n;
  }

  // The tile at block (mb, nb) of the current group grid, without its multicast plan.
  TC_HOST_DEVICE TileWork tile_at(uint32_t mb, uint32_t nb) const {
    TileWork w;
    w.group = grid_.group;
    w.d_group = grid_.d_group;
    w.m_block = mb;
    w.n_block = nb;
    w.k_begin = grid_.k_base;
    w.k_end = grid_.k_base + grid_.k;
    if (mb >= grid_.m_blocks || nb >= grid_.n_blocks) return w;
    const uint32_t local_row = mb * c_.block_m;
    if (p_.type == GemmType::kMGroupedContiguous && p_.contiguous_layout == ContiguousLayout::kRowIndex) {
      const int32_t expert = p_.group_data[local_row];
      // Padding (-1), or a value naming no expert (group_data_check.cuh traps on those).
      if (expert < 0 || static_cast<uint32_t>(expert) >= p_.num_groups) return w;
      w.group = static_cast<uint32_t>(expert);
      w.d_group = w.group;
    }
    w.valid = true;
    w.row = grid_.row_base + local_row;
    w.rows = cmin(c_.block_m, grid_.rows - local_row);
    w.col = nb * c_.block_n;
    w.cols = cmin(c_.block_n, p_.n - w.col);
    return w;
  }

  TC_HOST_DEVICE uint32_t groups() const { return has_group_grids(p_) ? p_.num_groups : 1u; }
  // The walk's grids: one per group and split-K slice (the slices of a k_cluster launch share one).
  TC_HOST_DEVICE uint32_t grids() const { return groups() * (p_.k_splits / c_.k_cluster); }

  // Where grid `index` sits in the walk, and (split-K) which K slice this CTA computes in it.
  TC_HOST_DEVICE void place_grid(GroupGrid& gr, uint32_t index, uint32_t first_unit) const {
    const uint32_t groups = this->groups();
    gr.index = index;
    gr.group = p_.k_splits == 1 ? index : index % groups;
    gr.d_group = index;
    gr.first_unit = first_unit;
    gr.k = p_.k;
    if (p_.k_splits != 1) {
      const uint32_t slice = index / groups * c_.k_cluster + k_rank_;
      gr.d_group = slice * groups + gr.group;
      const KSlice s = split_k_slice(p_.k, p_.k_splits, c_.block_k, slice);
      gr.k_base = s.begin;
      gr.k = s.size;
    }
  }

  // Loads grid `index` of the walk; its units start at first_unit and (k-grouped) its K columns at
  // k_base.
  TC_HOST_DEVICE bool load_group(uint32_t index, uint32_t first_unit, uint32_t k_base) {
    if (index >= grids()) return false;
    GroupGrid gr;
    gr.rows = p_.m;
    place_grid(gr, index, first_unit);
    const uint32_t g = gr.group;
    switch (p_.type) {
      case GemmType::kMGroupedContiguous:
        if (p_.contiguous_layout == ContiguousLayout::kOffsets) {
          const int32_t begin = p_.group_data[g], end = p_.group_data[g + 1];
          // Clamped into [0, m] and non-decreasing: rows are never read or written past A and D,
          // whatever the data (group_data_check.cuh says which data the kernel traps on).
          const uint32_t first = clamp_size(begin, p_.m);
          gr.row_base = first;
          gr.rows = clamp_size(end, p_.m) > first ? clamp_size(end, p_.m) - first : 0u;
        }
        break;
      case GemmType::kMGroupedMasked: {
        gr.rows = clamp_size(p_.group_data[g], p_.m);
        break;
      }
      case GemmType::kKGroupedContiguous: {
        // Clamped to the columns left: k_base never passes p_.k, so this cannot wrap. Rounded down
        // to kKGroupAlignment, so that every group starts where a TMA load may (the kernel traps
        // on such sizes, and no misaligned load may get there first).
        gr.k = clamp_size(p_.group_data[g], p_.k - k_base) / kKGroupAlignment * kKGroupAlignment;
        gr.k_base = k_base;
        break;
      }
      default:
        break;
    }
    gr.m_blocks = ceil_div(gr.rows, c_.block_m);
    gr.n_blocks = ceil_div(p_.n, c_.block_n);
    gr.units_m = ceil_div(gr.m_blocks, c_.unit_tiles_m());
    gr.units_n = ceil_div(gr.n_blocks, c_.unit_tiles_n());
    grid_ = gr;
    return true;
  }

  TC_HOST_DEVICE static constexpr uint32_t cmin(uint32_t a, uint32_t b) { return a < b ? a : b; }
  // A size from group data, clamped into [0, limit].
  TC_HOST_DEVICE static constexpr uint32_t clamp_size(int32_t v, uint32_t limit) {
    return v <= 0 ? 0u : cmin(static_cast<uint32_t>(v), limit);
  }

  GemmProblem p_;
  TileConfig c_;
  uint32_t rank_;    // in the cluster of cluster.m x cluster.n tiles
  uint32_t k_rank_;  // which of the k_cluster copies of that cluster: the CTA's slice in its grid
  uint32_t k_serpentine_wave_;  // units a wave with serpentine K, else 0 (the constructor)
  GroupGrid grid_{};
  bool valid_ = false;
  uint32_t unit_m0_ = 0, unit_n0_ = 0;  // the current unit's first tile (place_unit)
  bool k_reverse_ = false;              // the current unit walks K backwards (seek)
};

}  // namespace tilecast
