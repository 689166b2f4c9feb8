#!/usr/bin/env python3
"""Checks lbbench -offload's JSON lines (src/bench/README.md, "Pointwise work").

check_offload_bench.py parity VIRTUAL MPI
    the same replay on the virtual and the MPI backend: the same items
    moved, bytes, item and plan messages, and max/mean before and after.
check_offload_bench.py scale JSON
    a replay at many ranks: the plan moved items, the largest rank after
    it lies within the dearest item of the mean (max/mean after at most 1
    + dearest item / mean, and below max/mean before), every item
    conserved (at most the items there are moved), the plan's time per
    rank under 50 us and its memory per rank under 16 KB (about 5 us and
    1.4 KB measured at 131072 ranks on the 2-core machine, see the README
    section; the margins are for a slower machine, not for a plan that
    grows with P, which would be P times these).
Exit status 0 when the check holds.
"""
import json
import sys


def load(path):
    recs = [json.loads(line) for line in open(path) if line.strip()]
    assert len(recs) == 1, "%s: %d records" % (path, len(recs))
    return recs[0]


def parity(a, b):
    x, y = load(a), load(b)
    assert x["backend"] == "virtual" and y["backend"] == "mpi", "backends %s, %s" % (x["backend"], y["backend"])
    for k in ("items_moved", "bytes_moved", "item_messages", "item_messages_max", "plan_messages", "max_over_mean_before",
              "max_over_mean_after", "dearest_item_over_mean", "items_max_per_rank"):
        assert x[k] == y[k], "%s: %s on the virtual backend, %s on MPI" % (k, x[k], y[k])
    assert x["items_moved"] > 0, "nothing moved"
    print("the same plan on both backends: %d items moved, max/mean %.4f -> %.4f" % (
        x["items_moved"], x["max_over_mean_before"], x["max_over_mean_after"]))


def scale(path):
    r = load(path)
    before, after, dear = r["max_over_mean_before"], r["max_over_mean_after"], r["dearest_item_over_mean"]
    assert 0 < r["items_moved"] <= r["cells"], "%d of %d items moved" % (r["items_moved"], r["cells"])
    assert after <= 1 + dear + 1e-9 and after < before, "max/mean %.4f -> %.4f, dearest item %.4f" % (before, after, dear)
    assert r["plan_s_per_rank"] < 50e-6, "plan %.3g s per rank" % r["plan_s_per_rank"]
    assert r["plan_bytes_per_rank"] < 16384, "plan %.0f bytes per rank" % r["plan_bytes_per_rank"]
    print("%d ranks: max/mean %.4f -> %.4f (dearest item %.4f), %d items moved, plan %.2f us and %.0f bytes per rank" % (
        r["ranks"], before, after, dear, r["items_moved"], 1e6 * r["plan_s_per_rank"], r["plan_bytes_per_rank"]))


if __name__ == "__main__":
    {"parity": lambda: parity(sys.argv[2], sys.argv[3]), "scale": lambda: scale(sys.argv[2])}[sys.argv[1]]()
