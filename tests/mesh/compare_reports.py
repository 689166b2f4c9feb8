#!/usr/bin/env python3
"""Compares the L2 errors of two Poisson reports cycle by cycle: "same"
asserts they agree to 1e-9 (relative) in every cycle, "differ" that some
cycle differs by more than 1e-3.
Usage: compare_reports.py A.jsonl B.jsonl same|differ"""
import json
import sys

a, b, mode = sys.argv[1], sys.argv[2], sys.argv[3]
ra = [json.loads(line) for line in open(a) if line.strip()]
rb = [json.loads(line) for line in open(b) if line.strip()]
assert len(ra) == len(rb) > 0, "%d and %d records" % (len(ra), len(rb))
rel = max(abs(x["l2_error"] - y["l2_error"]) / abs(x["l2_error"]) for x, y in zip(ra, rb))
print("largest relative difference of the L2 errors: %.3e (%s expected)" % (rel, mode))
assert rel < 1e-9 if mode == "same" else rel > 1e-3
