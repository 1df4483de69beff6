// Which operand boxes a CTA prefetches into L2 at the kernel's start, and why.
//
// In a problem of at most one wave, every tile's first stages come from HBM: the L2 holds none of
// the operands yet. And they are requested late: a CTA's producer is still in the prologue
// (barrier setup, the cluster barrier, the register handoff, its scheduler) for about 2,000 cycles.
// So each CTA first prefetches a share of every tile's first stages: the first
// min(stages, k-steps) k-steps of every block row of A and every block column of B (per group
// where the operand has one matrix per group). The CTAs share these operand tiles round-robin; each is
// prefetched once. On the H200 the first stage then lands about 1,200 cycles earlier
// (bench/results/2026-12-02-h200-l2-prefetch.md).
//
// A problem of more than one wave prefetches nothing: a later tile's first stages would be fetched
// a whole wave before they are read. Split-K kernels neither: their slices start deep in K.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// One operand tile of the prefetch (operand_tile.cuh; an MN-major one is several TMA boxes):
// k-step `k_step` of block row `block` of A, or of block column `block` of B, in group `group`.
struct PrefetchTile {
  bool is_a = false;
  uint32_t block = 0, k_step = 0, group = 0;
};

struct FirstStagePrefetch {
  uint32_t k_steps = 0;   // the k-steps each tile has prefetched: min(stages, k-blocks)
  uint32_t m_blocks = 0, n_blocks = 0;
  // A's tiles come first, then B's, each ordered (group, block, k-step) with the k-step fastest.
  uint32_t a_tiles = 0, tiles = 0;

  // `groups` tile grids of m_blocks x n_blocks tiles each; `a_groups`/`b_groups` of them have
  // their own A/B matrix (1 or groups). `ctas`: the grid's size.
  static TC_HOST_DEVICE FirstStagePrefetch plan(uint32_t m_blocks, uint32_t n_blocks, uint32_t k_blocks,
                                                uint32_t groups, uint32_t a_groups, uint32_t b_groups,
                                                uint32_t stages, uint32_t ctas) {
    FirstStagePrefetch f;
    if (uint64_t{m_blocks} * n_blocks * groups > ctas) return f;
    f.k_steps = k_blocks < stages ? k_blocks : stages;
    f.m_blocks = m_blocks;
    f.n_blocks = n_blocks;
    f.a_tiles = a_groups * m_blocks * f.k_steps;
    f.tiles = f.a_tiles + b_groups * n_blocks * f.k_steps;
    return f;
  }

  // Tile i < tiles; a CTA takes tiles cta, cta + ctas, ...
  TC_HOST_DEVICE PrefetchTile tile(uint32_t i) const {
    PrefetchTile t;
    t.is_a = i < a_tiles;
    const uint32_t j = t.is_a ? i : i - a_tiles;
    const uint32_t blocks = t.is_a ? m_blocks : n_blocks;
    t.k_step = j % k_steps;
    t.block = j / k_steps % blocks;
    t.group = j / k_steps / blocks;
    return t;
  }
};

}  // namespace tilecast
