#!/usr/bin/env python3
"""Replays a launch's tile starts through the L2 model: the HBM bytes its walk would read if its
tiles ran when they did.

    TILECAST_JIT_OPTIONS=-DTILECAST_TIMELINE tilecast-bench --shape 16384,16384,16384 \\
        --warmup 1 --iters 1 --flush-mb 0 > tl.log
    scripts/l2_replay.py tl.log --k 16384 --block 128x256

The TLU lines (timeline.cuh: each tile's first load on the GPU's clock) of the log's last launch
give each tile's start; a tile runs until its CTA's next start (a CTA's last tile: the median tile
time) and reads its rows of A and columns of B in --slices even slices of K over that time. Every
tile's slices, in time order, go through an LRU of --l2-mib x --share (the share of L2 that
src/plan/l2_reuse.cpp gives operands); a miss costs its bytes. Beside it, the same tiles in
lockstep waves (in start order, as many a wave as CTAs, each wave's starting together, as
src/plan/l2_reuse.cpp assumes): the ratio is what the measured starts add to the model's bytes, to
hold against the chip's (Nsight Compute's dram__bytes_read) over the model's.
"""
import argparse
import collections
import sys

from timeline_summary import tile_launches, tile_times

BF16_BYTES = 2


class Lru:
    """L2 as an LRU cache of blocks; counts the bytes of the blocks it does not hold."""

    def __init__(self, capacity):
        self.capacity, self.held, self.missed = capacity, 0, 0
        self.blocks = collections.OrderedDict()

    def touch(self, key, size):
        if key in self.blocks:
            self.blocks.move_to_end(key)
            return
        self.missed += size
        self.blocks[key] = size
        self.held += size
        while self.held > self.capacity and self.blocks:
            self.held -= self.blocks.popitem(last=False)[1]


def lockstep(times, median, ctas):
    """The same tiles in waves that start together: the i-th tile to start, in wave i // ctas."""
    ordered = sorted(times, key=lambda tile: times[tile][0])
    return {tile: ((i // ctas) * median, median) for i, tile in enumerate(ordered)}


def replay(times, k, block_m, block_n, block_k, capacity, slices):
    """HBM bytes of A and B read by tiles running at `times` through an LRU of `capacity` bytes."""
    k_steps = -(-k // block_k)
    slices = max(1, min(slices, k_steps))
    slice_steps = -(-k_steps // slices)
    slices = -(-k_steps // slice_steps)  # whole slices of slice_steps; the last may be short
    touches = []
    for order, (tile, (start, duration)) in enumerate(sorted(times.items(), key=lambda t: t[1][0])):
        for s in range(slices):
            cols = min(slice_steps * block_k, k - s * slice_steps * block_k)
            touches.append((start + duration * s * slice_steps / k_steps, order, tile, s, cols))
    touches.sort(key=lambda t: (t[0], t[1]))
    l2 = Lru(capacity)
    for _, _, (group, m, n), s, cols in touches:
        l2.touch(("a", group, m, s), block_m * cols * BF16_BYTES)
        l2.touch(("b", group, n, s), block_n * cols * BF16_BYTES)
    return l2.missed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--k", type=int, required=True, help="the problem's K")
    ap.add_argument("--block", required=True, help="the tile, BMxBN (the plan's block_m x block_n)")
    ap.add_argument("--block-k", type=int, default=64)
    ap.add_argument("--l2-mib", type=float, default=60.0, help="L2's size (default the H200's 60 MiB)")
    ap.add_argument("--share", type=float, default=0.5, help="the share operands get (default l2_reuse.hpp's 0.5)")
    ap.add_argument("--slices", type=int, default=8, help="slices of K a tile reads in turn (default the model's 8)")
    args = ap.parse_args()
    block_m, block_n = (int(v) for v in args.block.lower().split("x"))
    with open(args.log, errors="replace") as f:
        launches = tile_launches(f)
    if not launches:
        print(f"{args.log}: no TLU lines (was the kernel compiled with -DTILECAST_TIMELINE?)")
        return 1
    times, median, ctas = tile_times(launches[-1])
    capacity = int(args.l2_mib * (1 << 20) * args.share)
    measured = replay(times, args.k, block_m, block_n, args.block_k, capacity, args.slices)
    waves = replay(lockstep(times, median, ctas), args.k, block_m, block_n, args.block_k, capacity, args.slices)
    print(f"{args.log}: {len(times)} tiles on {ctas} CTAs, tile {median / 1000:.1f} us; HBM bytes of A and B "
          f"replayed at the measured starts {measured / 1e9:.3f} GB, in lockstep waves {waves / 1e9:.3f} GB "
          f"(x{measured / waves:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
