#!/usr/bin/env python3
"""Summarises the CTA timelines a -DTILECAST_TIMELINE kernel prints (kernels/gemm_sm90/timeline.cuh).

    TILECAST_JIT_OPTIONS=-DTILECAST_TIMELINE build/tools/bench/tilecast-bench --shape 1000,1000,1000 \\
        --warmup 3 --iters 5 > tl.log
    scripts/timeline_summary.py tl.log [more logs]

Per log and line kind (TL: a CTA's life; TLP: the producer's path to its first load), the median
and range of every stamp, in SM cycles since the CTA's entry, over the last --last lines of that
kind (default 200: the last launches, once the JIT, the caches and the clocks have settled).

--tiles: from the TLU lines (each tile's first load on the GPU's clock), how far apart in time the
tiles of the log's last launch start: the median tile time (a CTA's consecutive starts), how wide
each wave is (the tiles in start order, as many a wave as CTAs), and how long after the previous
reader of the same rows of A, or the same columns of B, a tile starts, in tile times. Units in
lockstep start a wave together (spread 0) and find a shared block just read (gap 0, or one tile
time for the next wave's); where they spread apart the waves widen and the gaps grow, and a block
read again after L2 has let it go costs HBM bytes that src/plan/l2_reuse.cpp's lockstep model does
not see (scripts/l2_replay.py turns the starts into bytes: what L2 holds depends on everything the
wave reads over its width, not on the gap alone).
"""
import argparse
import re
import statistics
import sys

# "TL cta 16 ready 744 first_load 2967 ..." and "TLP cta 16 ready 744 in 1181 ...".
LINE = re.compile(r"^(TLP?) cta (\d+) (.*)$")
# "TLU cta 5 group 0 m 12 n 3 ns 1733389012345678".
TILE = re.compile(r"^TLU cta (\d+) group (\d+) m (\d+) n (\d+) ns (\d+)$")
# Where the gaps to a block's previous reader fall, in tile times: with it (the same wave), soon
# after, within a tile time, and later (a wave or more after).
GAP_BINS = (0.05, 0.25, 0.75)


def summarise(lines, last):
    """{kind: (lines used, [(stamp, median, low, high)])}, stamps in their printed order."""
    by_kind = {}
    for line in lines:
        m = LINE.match(line.strip())
        if m:
            by_kind.setdefault(m.group(1), []).append(m.group(3).split())
    out = {}
    for kind, rows in by_kind.items():
        rows = rows[-last:]
        names, values = [], {}
        for tokens in rows:
            if len(tokens) % 2:
                raise ValueError(f"a {kind} line with an odd number of fields: {' '.join(tokens)}")
            for name, value in zip(tokens[0::2], tokens[1::2]):
                if name not in values:
                    names.append(name)
                    values[name] = []
                values[name].append(int(value))
        out[kind] = (len(rows), [(n, statistics.median(values[n]), min(values[n]), max(values[n])) for n in names])
    return out


def tile_launches(lines):
    """The TLU lines as launches, each a list of (cta, group, m, n, ns): a launch starts each tile
    once, so a tile seen again opens the next launch."""
    launches, seen = [], set()
    for line in lines:
        m = TILE.match(line.strip())
        if not m:
            continue
        cta, group, row, col, ns = (int(v) for v in m.groups())
        if not launches or (group, row, col) in seen:
            launches.append([])
            seen = set()
        seen.add((group, row, col))
        launches[-1].append((cta, group, row, col, ns))
    return launches


def tile_times(launch):
    """Each tile's (start, duration) by its (group, m, n), the median tile time (ns) and the CTAs: a
    tile runs until its CTA's next start, a CTA's last tile the median of every CTA's steps."""
    by_cta = {}
    for cta, group, m, n, ns in launch:
        by_cta.setdefault(cta, []).append((ns, (group, m, n)))
    steps = []
    for starts in by_cta.values():
        starts.sort()
        steps += [b[0] - a[0] for a, b in zip(starts, starts[1:])]
    if not steps:
        raise ValueError("no CTA started two tiles: nothing to measure a tile's time by")
    median = statistics.median(steps)
    times = {}
    for starts in by_cta.values():
        for i, (ns, tile) in enumerate(starts):
            times[tile] = (ns, starts[i + 1][0] - ns if i + 1 < len(starts) else median)
    return times, median, len(by_cta)


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def tile_spread(launch):
    """One launch's tile time (ns), each wave's width and the gaps to a shared block's previous
    reader (both in tile times), and how those gaps fall in GAP_BINS."""
    times, tile_ns, ctas = tile_times(launch)
    ordered = sorted(launch, key=lambda t: t[4])
    waves = [ordered[i:i + ctas] for i in range(0, len(ordered), ctas)]
    widths = [(w[-1][4] - w[0][4]) / tile_ns for w in waves]
    gaps = {"rows": [], "columns": []}
    last_reader = {}
    for _, group, row, col, ns in ordered:
        for side, block in (("rows", (group, "m", row)), ("columns", (group, "n", col))):
            if block in last_reader:
                gaps[side].append((ns - last_reader[block]) / tile_ns)
            last_reader[block] = ns
    binned = {}
    for side, values in gaps.items():
        edges = (0.0,) + GAP_BINS + (float("inf"),)
        binned[side] = [sum(lo <= v < hi for v in values) / max(1, len(values)) for lo, hi in zip(edges, edges[1:])]
    return {"tiles": len(times), "ctas": ctas, "tile_ns": tile_ns, "widths": widths, "gaps": gaps, "binned": binned}


def describe_tiles(path, launches):
    s = tile_spread(launches[-1])
    widths = s["widths"]
    line = (f"{path} TLU (the last of {len(launches)} launches): {s['tiles']} tiles on {s['ctas']} CTAs, "
            f"tile {s['tile_ns'] / 1000:.1f} us; wave width in tile times: first {widths[0]:.2f}, "
            f"median {statistics.median(widths):.2f}, last full {widths[-2] if len(widths) > 1 else widths[0]:.2f}")
    for side in ("rows", "columns"):
        values = s["gaps"][side]
        if values:
            bins = " ".join(f"{share:.0%}" for share in s["binned"][side])
            below = ", ".join(f"<{edge}" for edge in GAP_BINS)
            line += (f"; after the previous reader of the same {side}: median {statistics.median(values):.2f}, "
                     f"p90 {percentile(values, 0.9):.2f} ({below}, beyond: {bins})")
    return line


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--last", type=int, default=200, help="lines of each kind per log (default 200)")
    ap.add_argument("--tiles", action="store_true", help="the last launch's tile starts (TLU lines) instead")
    args = ap.parse_args()
    for path in args.logs:
        with open(path, errors="replace") as f:
            if args.tiles:
                launches = tile_launches(f)
                print(describe_tiles(path, launches) if launches else f"{path}: no TLU lines")
                continue
            summary = summarise(f, args.last)
        if not summary:
            print(f"{path}: no timeline lines (was the kernel compiled with -DTILECAST_TIMELINE?)")
        for kind, (n, stamps) in sorted(summary.items()):
            cells = " ".join(f"{name} {med:.0f} [{lo}-{hi}]" for name, med, lo, hi in stamps)
            print(f"{path} {kind} ({n} CTAs): {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
