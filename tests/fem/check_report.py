#!/usr/bin/env python3
"""Checks an amr2d/amr3d -report file: one JSON object per cycle, cycles
0..N-1 in order, every required field present and finite, phase times
non-negative.  With MIN_RATE, also the H1 error against the DoF count over
the second half of the cycles: error ~ dofs^(-rate), rate >= MIN_RATE, and
the effectivity (estimate / H1 error) of every cycle within [0.5, 2].
Usage: check_report.py FILE.jsonl NCYCLES [MIN_RATE]"""
import json
import math
import sys

path, ncycles = sys.argv[1], int(sys.argv[2])
min_rate = float(sys.argv[3]) if len(sys.argv) > 3 else None
phases = ["t_setup", "t_assembly", "t_solve", "t_estimate", "t_adapt", "t_partition", "t_output"]
required = ["cycle", "cells", "dofs", "ksp_its", "ksp_rnorm", "l2_error", "h1_error", "estimate", "effectivity"] + phases
with open(path) as f:
    records = [json.loads(line) for line in f if line.strip()]
assert len(records) == ncycles, "%s: %d records, expected %d" % (path, len(records), ncycles)
for i, r in enumerate(records):
    missing = [k for k in required if k not in r]
    assert not missing, "cycle %d lacks %s" % (i, missing)
    assert r["cycle"] == i, "record %d has cycle %s" % (i, r["cycle"])
    assert all(r[k] >= 0 and math.isfinite(r[k]) for k in phases), "cycle %d: bad phase times" % i
    assert r["cells"] > 0 and r["dofs"] > 0 and r["ksp_its"] >= 0
if min_rate is not None:
    half = records[ncycles // 2:]
    xs = [math.log(r["dofs"]) for r in half]
    ys = [math.log(r["h1_error"]) for r in half]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    rate = -sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    effs = [r["effectivity"] for r in records]
    print("H1 rate against dofs %.3f (required %.3f), effectivity %.3f..%.3f" % (rate, min_rate, min(effs), max(effs)))
    assert rate >= min_rate, "rate %.3f below %.3f" % (rate, min_rate)
    assert all(0.5 <= e <= 2.0 for e in effs), "effectivity outside [0.5, 2]: %s" % effs
print("%s: %d cycles ok" % (path, ncycles))
