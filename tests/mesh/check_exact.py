#!/usr/bin/env python3
"""Checks that a Poisson report reproduced its exact solution: NCYCLES
records, every L2 error below TOL.
Usage: check_exact.py FILE.jsonl NCYCLES TOL"""
import json
import sys

path, ncycles, tol = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
with open(path) as f:
    records = [json.loads(line) for line in f if line.strip()]
assert len(records) == ncycles, "%s: %d records, expected %d" % (path, len(records), ncycles)
worst = max(r["l2_error"] for r in records)
print("%s: %d cycles, largest L2 error %.3e (tolerance %.1e)" % (path, ncycles, worst, tol))
assert worst < tol, "L2 error %.3e above %.1e" % (worst, tol)
