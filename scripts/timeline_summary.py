#!/usr/bin/env python3
"""Summarises the CTA timelines a -DTILECAST_TIMELINE kernel prints (kernels/gemm_sm90/timeline.cuh).

    TILECAST_JIT_OPTIONS=-DTILECAST_TIMELINE build/tools/bench/tilecast-bench --shape 1000,1000,1000 \\
        --warmup 3 --iters 5 > tl.log
    scripts/timeline_summary.py tl.log [more logs]

Per log and line kind (TL: a CTA's life; TLP: the producer's path to its first load), the median
and range of every stamp, in SM cycles since the CTA's entry, over the last --last lines of that
kind (default 200: the last launches, once the JIT, the caches and the clocks have settled).
"""
import argparse
import re
import statistics
import sys

# "TL cta 16 ready 744 first_load 2967 ..." and "TLP cta 16 ready 744 in 1181 ...".
LINE = re.compile(r"^(TLP?) cta (\d+) (.*)$")


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--last", type=int, default=200, help="lines of each kind per log (default 200)")
    args = ap.parse_args()
    for path in args.logs:
        with open(path, errors="replace") as f:
            summary = summarise(f, args.last)
        if not summary:
            print(f"{path}: no timeline lines (was the kernel compiled with -DTILECAST_TIMELINE?)")
        for kind, (n, stamps) in sorted(summary.items()):
            cells = " ".join(f"{name} {med:.0f} [{lo}-{hi}]" for name, med, lo, hi in stamps)
            print(f"{path} {kind} ({n} CTAs): {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
