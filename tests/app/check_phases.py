#!/usr/bin/env python3
"""Run an amr2d/amr3d command that writes REPORT, then check its phase model.

usage: check_phases.py REPORT PHASE,PHASE,... [--weights W] -- COMMAND...

The command must exit 0.  Every record of REPORT must carry the object
"phases" with exactly the given phases (the problem's, then estimate,
output, adapt, partition), each with one own_cpu, own_wall and wall value
per rank in the side file (postprocess/report_ranks.py), finite and >= 0, own work at most the phase's wall time
(thread CPU <= elapsed, less the same time inside MPI), fitted costs for
the modelled phases (one for every load type of a phase modelled by
cells); cycle_time_s and cycle_mean_s must be the sum over
phases of the largest and of the mean own_cpu, cycle_imbalance_pct their
I%, lost_s and model_total_s the run's sums; predicted_s must be the
previous record's next_predicted_s, and next_predicted_s the sum over the
modelled phases of the largest next_own_cpu (the model's loads per rank
on the next partition) and over the others of the largest own_cpu (null
for those); with --weights phases the rebalanced
cycles name the factor of every modelled phase, unless the
multi-constraint split was chosen (phase_split); predicted_cycle_imbalance_pct
must be the previous record's next_imbalance_pct; every record's miss_pct of
each phase must be the sum over the cycles so far and the ranks of |own_cpu -
the previous record's next_own_cpu| over the sum of those own_cpu; every
"lb cycle" line of the output must show its record's measured and predicted
I% and cells moved, and one that moves cells to a partition predicted above
the measured I% the kept partition's predicted I%, at least as high where
the -lb_threshold rule moved (rebalance, gain); and the three summary
lines must give the records' totals (check_summary).  Prints one line per run
and "phases check passed", or what failed, exit 1."""
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "postprocess"))
import report_ranks  # noqa: E402


def close(a, b, rel=1e-9, abs_=1e-12):
    return abs(a - b) <= abs_ + rel * max(abs(a), abs(b))


def per_rank(r, name):
    """Phase name's own_cpu, own_wall, wall and next_own_cpu of record r, one value per rank."""
    return {k: report_ranks.values(r, "phases.%s.%s" % (name, k)) for k in ("own_cpu", "own_wall", "wall", "next_own_cpu")}


def check(recs, phases, weights):
    bad = []
    lost = total = 0.0
    prev = None
    for r in recs:
        c, P = r["cycle"], r["ranks"]
        ph = r.get("phases")
        if ph is None or list(ph) != phases:
            bad.append("cycle %d: phases %s, expected %s" % (c, None if ph is None else list(ph), phases))
            continue
        tmax = tmean = nxt = 0.0
        for name, v in ph.items():
            a = per_rank(r, name)
            n = a["next_own_cpu"]
            if v["model"] == "measured" or r["next_predicted_s"] is None:
                if n is not None or v["next_own_cpu"] is not None:
                    bad.append("cycle %d, phase %s: next_own_cpu %s without a model or prediction" % (c, name, n))
                nxt += max(a["own_cpu"])
            elif n is None or len(n) != P or not all(isinstance(t, (int, float)) and math.isfinite(t) and t >= 0 for t in n):
                bad.append("cycle %d, phase %s: next_own_cpu %s is not %d times >= 0" % (c, name, n, P))
            else:
                nxt += max(n)
            for key in ("own_cpu", "own_wall", "wall"):
                x = a[key]
                if x is None or len(x) != P or not all(isinstance(t, (int, float)) and math.isfinite(t) and t >= 0 for t in x):
                    bad.append("cycle %d, phase %s: %s %s is not %d times >= 0" % (c, name, key, x, P))
            for q in range(P):
                if a["own_cpu"][q] > a["wall"][q] + 2e-3 or a["own_wall"][q] > a["wall"][q] + 1e-9:
                    bad.append("cycle %d, phase %s, rank %d: own work %.4g/%.4g above the wall time %.4g" % (c, name, q, a["own_cpu"][q], a["own_wall"][q], a["wall"][q]))
            if v["model"] not in ("measured", "cells", "types") or (v["model"] != "measured") != (v["cost_s"] is not None):
                bad.append("cycle %d, phase %s: model %s but cost_s %s" % (c, name, v["model"], v["cost_s"]))
            elif v["model"] == "cells" and len(set(v["cost_s"])) != 1:
                bad.append("cycle %d, phase %s: one cost for every cell, but %s" % (c, name, v["cost_s"]))
            if weights == "phases" and r["rebalanced"] and v["model"] != "measured" and (v["alpha"] is None) != r["phase_split"]:
                bad.append("cycle %d, phase %s: rebalanced by phases weights without a factor" % (c, name))
            tmax += max(a["own_cpu"])
            tmean += sum(a["own_cpu"]) / P
        ipct = 100 * (tmax - tmean) * P / (tmax * (P - 1)) if P > 1 and tmax > 0 else 0
        if not (close(tmax, r["cycle_time_s"]) and close(tmean, r["cycle_mean_s"]) and close(ipct, r["cycle_imbalance_pct"], 1e-7, 1e-9)):
            bad.append("cycle %d: cycle_time_s %s, cycle_mean_s %s, I%% %s disagree with the phases (%s, %s, %s)" % (
                c, r["cycle_time_s"], r["cycle_mean_s"], r["cycle_imbalance_pct"], tmax, tmean, ipct))
        lost += tmax - tmean
        total += tmax
        if not (close(lost, r["lost_s"], 1e-7, 1e-9) and close(total, r["model_total_s"], 1e-7, 1e-9)):
            bad.append("cycle %d: lost_s %s, model_total_s %s, expected %s, %s" % (c, r["lost_s"], r["model_total_s"], lost, total))
        if r["next_predicted_s"] is not None and not close(nxt, r["next_predicted_s"], 1e-9, 1e-12):
            bad.append("cycle %d: next_predicted_s %s, but the phases' next loads sum to %s" % (c, r["next_predicted_s"], nxt))
        if prev is not None and prev.get("next_predicted_s") is not None and not close(prev["next_predicted_s"], r["predicted_s"] or 0):
            bad.append("cycle %d: predicted_s %s is not the last cycle's next_predicted_s %s" % (c, r["predicted_s"], prev["next_predicted_s"]))
        if prev is not None and prev.get("next_imbalance_pct") is not None and not close(prev["next_imbalance_pct"], r["predicted_cycle_imbalance_pct"] or 0):
            bad.append("cycle %d: predicted_cycle_imbalance_pct %s is not the last cycle's next_imbalance_pct %s" % (
                c, r["predicted_cycle_imbalance_pct"], prev["next_imbalance_pct"]))
        if r["cycle_wall_s"] + 1e-3 < tmax / P:
            bad.append("cycle %d: wall %s below the own work" % (c, r["cycle_wall_s"]))
        if not r["mpi_profiled"]:
            bad.append("cycle %d: the MPI profiling layer is not linked" % c)
        prev = r
    return bad


def check_miss(recs):
    """Every record's per-rank misses (miss_pct of each phase, all cycles so
    far) against those computed from the records: each rank's own_cpu
    against the previous record's next_own_cpu for it (none after a
    restart on another rank count)."""
    miss, of, bad = {}, {}, []
    for prev, r in zip([None] + recs, recs):
        for name, v in (r.get("phases") or {}).items():
            n = per_rank(prev, name)["next_own_cpu"] if prev and prev["ranks"] == r["ranks"] else None
            own = per_rank(r, name)["own_cpu"]
            if n is not None:
                miss[name] = miss.get(name, 0) + sum(abs(a - b) for a, b in zip(own, n))
                of[name] = of.get(name, 0) + sum(own)
            want = 100 * miss[name] / of[name] if of.get(name, 0) > 0 else None
            said = v["miss_pct"]
            if (said is None) != (want is None) or (want is not None and not close(said, want, 1e-9, 1e-12)):
                bad.append("cycle %d, phase %s: miss_pct %s, the records give %s" % (r["cycle"], name, said, want))
    return bad


LINE = re.compile(r"lb cycle (\d+)[^:]*: .* I% ([\d.]+) measured -> ([\d.]+) predicted, migrated (\d+) cells(.*)")


def check_lines(out, recs):
    """The run's lb cycle lines against its records: the measured I%, the
    predicted one (the partition taken) and the cells moved; a line that
    moves cells to a partition predicted above the measured I% names the
    kept partition's predicted I%, at least the taken one's."""
    by_cycle, bad, n = {r["cycle"]: r for r in recs}, [], 0
    for line in out.splitlines():
        m = LINE.search(line)
        if not m:
            continue
        n += 1
        c, meas, pred, moved, why = int(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4)), m.group(5)
        r = by_cycle.get(c)
        if r is None:
            bad.append("cycle %d: a line but no record" % c)
            continue
        said = (meas, pred, moved)
        want = (round(r["cycle_imbalance_pct"], 1), round(r["next_imbalance_pct"], 1) if r["next_imbalance_pct"] is not None else None, r["migrated_cells_tot"])
        if said[0] != want[0] or (want[1] is not None and said[1] != want[1]) or said[2] != want[2]:
            bad.append("cycle %d: the line says I%% %s -> %s, %d moved; the record %s -> %s, %s" % ((c,) + said + want))
        if moved and pred > meas:
            # the rule moves only to a partition predicted better than the
            # kept one; without it (always) the line says what it kept
            k = re.search(r"kept predicted I% ([\d.]+) on the adapted mesh", why)
            if not k or (r["lb_decision"] in ("rebalance", "gain") and float(k.group(1)) < pred):
                bad.append("cycle %d: moves to I%% %s predicted above the measured %s without a kept partition predicted worse: %s" % (c, pred, meas, why))
    return bad if n else ["no lb cycle line in the output"]


PAID = re.compile(r"summary: balancing's net gain (-?[\d.]+) s.*: it saved (-?[\d.]+) s against the initial partition kept, "
                  r"its partition phase cost ([\d.]+) s")
LOST = re.compile(r"summary: lost to imbalance ([\d.]+) s \([\d.]+% of the modelled run\): (.*)")
WALL = re.compile(r"summary: modelled ([\d.]+) s of own work \(each phase's slowest rank\), wall ([\d.]+) s: (-?[\d.]+) s more in the cycles "
                  r"\([^)]*\), (-?[\d.]+) s outside them")


def phase_sums(recs, name):
    """Phase name's slowest rank's own work (at least 0, as the model
    takes it) and the ranks' mean, each summed over the records."""
    own = [r["phases"][name]["own_cpu"] for r in recs]
    return sum(max(0.0, o["max"]) for o in own), sum(o["mean"] for o in own)


def check_summary(out, recs):
    """The run's three summary lines against its records, each number to
    the 3 decimals printed: the saving (the last gain_s), the partition
    phase's cost (its slowest rank's own work summed over the cycles) and
    their difference (unless it ran without balancing, or restarted on
    another rank count, which has no initial partition); the loss (lost_s) and each phase's share (the slowest
    rank less the mean, summed); the model's total (model_total_s), the
    wall's part inside the cycles (the cycles' cycle_wall_s summed, less
    the model's total), and a part outside them that is not negative."""
    last, bad = recs[-1], []
    half = 0.0005 + 1e-9

    def agree(what, said, want, tol=half):
        if abs(said - want) > tol:
            bad.append("summary: %s %.3f, the records give %.6f" % (what, said, want))

    m = PAID.search(out)
    if m:
        cost = phase_sums(recs, "partition")[0]
        agree("saved", float(m.group(2)), last["gain_s"])
        agree("partition phase cost", float(m.group(3)), cost)
        agree("net gain", float(m.group(1)), last["gain_s"] - cost)
    elif "summary: no balancing (-lb_method none)" not in out and "no phase model says what it saved" not in out:
        bad.append("summary: no line saying whether balancing paid")
    m = LOST.search(out)
    if not m:
        bad.append("summary: no 'lost to imbalance' line")
    else:
        agree("lost to imbalance", float(m.group(1)), last["lost_s"])
        for item in m.group(2).split(", "):
            name, value = item.rsplit(" ", 1)
            slowest, mean = phase_sums(recs, name)
            agree("lost in " + name, float(value), slowest - mean)
    m = WALL.search(out)
    if not m:
        bad.append("summary: no line splitting the wall")
    else:
        agree("modelled", float(m.group(1)), last["model_total_s"])
        agree("more in the cycles", float(m.group(3)), sum(r["cycle_wall_s"] for r in recs) - last["model_total_s"])
        if float(m.group(4)) < 0:
            bad.append("summary: %s s outside the cycles: the wall clock does not cover them" % m.group(4))
    return bad


def main(argv):
    if "--" not in argv or argv.index("--") < 3:
        print(__doc__)
        return 2
    sep = argv.index("--")
    report, phases = argv[1], argv[2].split(",")
    weights = argv[argv.index("--weights") + 1] if "--weights" in argv[:sep] else None
    run = subprocess.run(argv[sep + 1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        print(run.stdout)
        print("phases check failed: the run exited with %d" % run.returncode)
        return 1
    recs = report_ranks.records(report)
    bad = check(recs, phases, weights) + check_miss(recs) + check_lines(run.stdout, recs) + check_summary(run.stdout, recs) if recs else ["%s has no record" % report]
    last = recs[-1] if recs else {}
    print("%s: %d cycles on %s ranks, modelled %.4f s, lost %.4f s, last cycle %.4f s predicted %s" % (
        report, len(recs), last.get("ranks"), last.get("model_total_s", 0), last.get("lost_s", 0), last.get("cycle_time_s", 0), last.get("predicted_s")))
    for b in bad[:20]:
        print(b)
    print("phases check %s" % ("failed" if bad else "passed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
