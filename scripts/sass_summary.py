#!/usr/bin/env python3
"""What a kernel's SASS (cuobjdump -sass) shows first, for scripts/sass.sh.

  sass_summary.py kernel.sass

Prints the instruction count, local memory (LDL/STL: spills), the wgmma (HGMMA) shapes, TMA
loads and stores, barrier waits; then every loop that holds a wgmma: its address range, its
instructions, and its hot path, that is without the stretches a forward branch skips that end in
a trap (the bounded waits' timeout paths, which run only when a wait has timed out).
"""
import re
import sys
from collections import Counter

# "        /*1c00*/      @!P0 HGMMA.64x256x16.F32.BF16 R24, gdesc[UR8], R24 ;"
LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+(?:\.[A-Za-z0-9_]+)*)(.*?);")
BRANCH = re.compile(r"\b(0x[0-9a-f]+)\s*$")
# A k-loop is a few hundred instructions at most; a longer backward range is an outer loop (the
# tile loop, the epilogue inside) or a divergent path's fallback at the end of the kernel jumping
# back, whose instructions do not run once per k-step.
MAX_K_LOOP = 1024


def parse(path):
    """(address, opcode with modifiers, operands, predicated) per instruction, in order."""
    out = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                out.append((int(m.group(1), 16), m.group(3), m.group(4).strip(), bool(m.group(2))))
    return out


def base(opcode):
    return opcode.split(".")[0]


def cold_addresses(body):
    """Addresses inside `body` that a forward branch skips on its way past a trap."""
    cold = set()
    for i, (addr, op, args, predicated) in enumerate(body):
        if base(op) != "BRA" or not predicated:
            continue
        m = BRANCH.search(args)
        if not m:
            continue
        target = int(m.group(1), 16)
        if target <= addr:
            continue
        skipped = [ins for ins in body[i + 1:] if ins[0] < target]
        if any(base(ins[1]) == "BPT" for ins in skipped):
            cold.update(ins[0] for ins in skipped)
    return cold


def loops_with_wgmma(ins):
    """(head, tail) of every short backward branch's range that holds an HGMMA, shortest first."""
    found = []
    for addr, op, args, _ in ins:
        if base(op) != "BRA":
            continue
        m = BRANCH.search(args)
        if not m:
            continue
        head = int(m.group(1), 16)
        body = [o for a, o, _, _ in ins if head <= a <= addr]
        if head < addr and len(body) <= MAX_K_LOOP and any(base(o) == "HGMMA" for o in body):
            found.append((head, addr))
    return sorted(set(found), key=lambda r: r[1] - r[0])


def describe(counter, names):
    return ", ".join(f"{counter[n]} {n}" for n in names if counter[n])


def main(path):
    ins = parse(path)
    ops = Counter(base(op) for _, op, _, _ in ins)
    full = Counter(op for _, op, _, _ in ins)
    print(f"  {len(ins)} instructions; local memory: {ops['LDL']} LDL, {ops['STL']} STL")
    shapes = sorted(op for op in full if base(op) == "HGMMA")
    print("  wgmma: " + (", ".join(f"{full[s]} {s}" for s in shapes) or "none"))
    tma = sorted(op for op in full if base(op) in ("UTMALDG", "UTMASTG", "UBLKCP", "UTMAPF"))
    print("  TMA: " + (", ".join(f"{full[s]} {s}" for s in tma) or "none"))
    print("  sync: " + describe(full, sorted(op for op in full if base(op) in ("SYNCS", "BAR", "WARPGROUP"))))
    for head, tail in loops_with_wgmma(ins):
        body = [x for x in ins if head <= x[0] <= tail]
        cold = cold_addresses(body)
        hot = [x for x in body if x[0] not in cold]
        hot_ops = Counter(base(op) for _, op, _, _ in hot)
        other = len(hot) - hot_ops["HGMMA"]
        print(f"  loop {head:#x}-{tail:#x}: {len(body)} instructions, {len(cold)} on trap paths; "
              f"hot path {len(hot)}: {hot_ops['HGMMA']} HGMMA, {other} others "
              f"({describe(hot_ops, ['SYNCS', 'WARPGROUP', 'R2UR', 'IMAD', 'VIADD', 'ISETP', 'NOP', 'BAR'])})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
