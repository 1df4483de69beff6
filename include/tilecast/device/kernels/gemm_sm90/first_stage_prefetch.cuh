// Which operand boxes a CTA prefetches into L2 at the kernel's start, and why.
//
// In a problem of at most one wave, every tile's first stage comes from HBM: the L2 holds none of
// the operands yet. And it is requested late: a CTA's producer is still in the prologue (barrier
// setup, the cluster barrier, the register handoff, its scheduler) for about 2,000 cycles. So each
// CTA first prefetches a share of every tile's first stage: the first k-step of every block row of
// A and every block column of B (per group where the operand has one matrix per group). The CTAs
// share these operand tiles round-robin; each is prefetched once.
//
// Measured on the H200 (bench/results/2026-12-02-h200-l2-prefetch.md): the first stage lands about
// 1,200 cycles earlier. Only the first k-step: prefetching every stage of the ring was up to 7%
// slower where the operands have few readers (m = 128, small batches), its later stages competing
// with the first in HBM's queues.
//
// A split-K kernel's units are a tile's K slices, and each slice's first k-step is a first stage:
// in one wave, every slice's is prefetched. Measured on the H200 (run H of
// bench/results/2026-12-03-h200-l2-lines.md, four rounds in alternating processes): the split-K
// rows 3-6% faster (255x576x7168 15.9 -> 15.3 us, 128x2112x7168 22.7 -> 22.0, 64x576x7168 11.7 ->
// 11.0; 128x7168x16384, with 128 k-steps a slice, 0.9%).
//
// A problem of more than one wave prefetches nothing: a later tile's first stage would be fetched
// a whole wave before it is read.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// One operand tile of the prefetch (operand_tile.cuh; an MN-major one is several TMA boxes): the
// first k-step of block row `block` of A, or of block column `block` of B, in group `group`.
struct PrefetchTile {
  bool is_a = false;
  uint32_t block = 0, group = 0;
  uint32_t slice = 0;  // the split-K slice whose first k-step it is (0 unsplit)
};

struct FirstStagePrefetch {
  uint32_t m_blocks = 0, n_blocks = 0;
  // Per slice, A's tiles come first, then B's, each ordered (group, block); slice after slice.
  uint32_t a_tiles = 0, slice_tiles = 0, tiles = 0;

  // `groups` tile grids of m_blocks x n_blocks tiles each; `a_groups`/`b_groups` of them have
  // their own A/B matrix (1 or groups). `ctas`: the grid's size. `slices`: split-K slices, each
  // tile's K cut into that many (every unit of work is a tile's slice).
  static TC_HOST_DEVICE FirstStagePrefetch plan(uint32_t m_blocks, uint32_t n_blocks, uint32_t groups,
                                                uint32_t a_groups, uint32_t b_groups, uint32_t ctas,
                                                uint32_t slices = 1) {
    FirstStagePrefetch f;
    if (uint64_t{m_blocks} * n_blocks * groups * slices > ctas) return f;
    f.m_blocks = m_blocks;
    f.n_blocks = n_blocks;
    f.a_tiles = a_groups * m_blocks;
    f.slice_tiles = f.a_tiles + b_groups * n_blocks;
    f.tiles = f.slice_tiles * slices;
    return f;
  }

  // Tile i < tiles; a CTA takes tiles cta, cta + ctas, ...
  TC_HOST_DEVICE PrefetchTile tile(uint32_t i) const {
    PrefetchTile t;
    t.slice = i / slice_tiles;
    i %= slice_tiles;
    t.is_a = i < a_tiles;
    const uint32_t j = t.is_a ? i : i - a_tiles;
    const uint32_t blocks = t.is_a ? m_blocks : n_blocks;
    t.block = j % blocks;
    t.group = j / blocks;
    return t;
  }
};

}  // namespace tilecast
