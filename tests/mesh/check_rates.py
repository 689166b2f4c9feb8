#!/usr/bin/env python3
"""Checks the convergence rates of a Poisson report under uniform
refinement (h halves every cycle): for each KEY:LO:HI, the rate
log2(e[k-1] / e[k]) of the error KEY (l2_error, h1_error) over each of the
last two refinements lies in [LO, HI].
Usage: check_rates.py FILE.jsonl KEY:LO:HI [KEY:LO:HI ...]"""
import json
import math
import sys

if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
    sys.exit(__doc__)
path = sys.argv[1]
with open(path) as f:
    records = [json.loads(line) for line in f if line.strip()]
assert len(records) >= 3, "%s: %d records, need 3" % (path, len(records))
for spec in sys.argv[2:]:
    key, lo, hi = spec.split(":")
    e = [r[key] for r in records[-3:]]
    rates = [math.log2(e[i] / e[i + 1]) for i in range(2)]
    print("%s: %s %s, rates %.3f %.3f (required %s..%s)" % (path, key, " ".join("%.4e" % x for x in e), rates[0], rates[1], lo, hi))
    assert all(float(lo) <= r <= float(hi) for r in rates), "%s: %s rates %s outside [%s, %s]" % (path, key, rates, lo, hi)
