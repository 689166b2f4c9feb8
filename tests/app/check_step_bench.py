#!/usr/bin/env python3
"""Checks lbbench -chain -step's JSON line (src/bench/README.md, "The app's
balancing step at scale").

check_step_bench.py JSON
    the app's step replayed at P virtual ranks with sfc: the phase choice's
    model time (by prefix sums, no P-long array) equals the model of the
    cut sfc realised from the choice's weights (the same cut rule) to
    round-off and is at most the plain sum's cut's; the step's time per rank under 10 ms and its memory per
    rank under 128 bytes per rank of P plus 64 KB (issue 41's budget at
    131072 ranks: 16 MB; about 0.2 ms and 104-128 bytes measured at 16384
    and 131072 ranks on the 2-core machine); its collectives per rank
    independent of P (at most 400).
Exit status 0 when the check holds.
"""
import json
import sys


def main(path):
    recs = [json.loads(line) for line in open(path) if line.strip()]
    assert len(recs) == 1, "%s: %d records" % (path, len(recs))
    r = recs[0]
    P = r["ranks"]
    assert r["mode"] == "step" and r["method"] == "sfc", "not an sfc step replay"
    chosen, realised = r["model_chosen_s"], r["model_realised_s"]
    if not r["phase_split"]:
        assert abs(chosen - realised) <= 1e-12 * realised, "chosen %.17g, realised %.17g" % (chosen, realised)
    assert chosen <= r["model_sum_s"] * (1 + 1e-12), "chosen %.17g above the summed weight's %.17g" % (chosen, r["model_sum_s"])
    assert r["time_per_rank_s"] < 0.01, "time per rank %.3g s" % r["time_per_rank_s"]
    assert r["bytes_per_rank"] < 128 * P + 65536, "memory per rank %.0f bytes" % r["bytes_per_rank"]
    assert r["collectives_per_rank"] <= 400, "%d collectives per rank" % r["collectives_per_rank"]
    print("%d ranks: model %.6g -> %.6g, %.3f ms and %.0f bytes per rank, %d collectives" % (
        P, r["model_start_s"], realised, 1e3 * r["time_per_rank_s"], r["bytes_per_rank"], r["collectives_per_rank"]))


if __name__ == "__main__":
    main(sys.argv[1])
