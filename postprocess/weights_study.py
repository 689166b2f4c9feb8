#!/usr/bin/env python3
"""The figures of the weights study (config/weights-study.sh).

    python3 postprocess/weights_study.py [-o DIR] REPORT.jsonl [MORE.jsonl ...]

Groups the reports by problem and -lb_weights mode (one report is one run)
and writes into DIR (default: the current directory) weights-study.md (also
printed) and weights-study.png.  Per run:

  lost % of work   time lost to imbalance (lost_rank_s) as a share of the
                   ranks' time in the local work, ranks x sum of t_rank_max
                   (thread CPU: what the balancer sees, not the waits of a
                   loaded machine)
  lost % of run    lost_rank_s / (ranks x total_s), total_s the wall time
  work s           sum over cycles of t_rank_max: the run's local work on
                   its busiest rank, thread CPU (a loaded machine's waits
                   left out, unlike total s)
  fit within 15%   cycles after the first three whose fitted cost ratios
                   weights[t] / weights[0] are all within 15% of the measured
                   ones, weights_measured[t] / weights_measured[0] (runs
                   with timing weights and measured per-cell costs; a cost
                   the fit held at 0 is a miss), and the medians of those
                   ratios over the same cycles
  rank speed       where the report has rank_reaction_step_ns (the same
                   arithmetic on every rank): the slowest rank's time per
                   integrator step over the fastest's, median and 90th
                   percentile over the cycles.  Any fit to rank times
                   inherits this spread as noise

and per problem, pairing run k of each mode with run k of count weights:
the share of count's lost time that the mode removes, and the run-time
ratio count / mode.
"""
import argparse
import json
import math
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = ("count", "timing", "measured", "model")


def load(path):
    with open(path) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    if not recs or "weights_measured" not in recs[0]:
        raise SystemExit("weights_study.py: error: %s is not a report with weights_measured" % path)
    return recs


def fit_agreement(recs, skip=3, tol=0.15):
    ok = n = 0
    for r in recs[skip:]:
        w, m = r["weights"], r["weights_measured"]
        pairs = [(w[t] / w[0] if w[0] else math.inf, m[t] / m[0]) for t in range(1, len(w))
                 if m[0] and m[t] and math.isfinite(m[0]) and math.isfinite(m[t])]
        if not pairs:
            continue
        n += 1
        ok += all(abs(f / g - 1) <= tol for f, g in pairs)
    return ok, n


def ratio_medians(recs, skip=3):
    """Median over the cycles after the first three of weights[t]/weights[0]
    and weights_measured[t]/weights_measured[0], for every type t > 0."""
    out = []
    for t in range(1, len(recs[0]["weights"])):
        f = [r["weights"][t] / r["weights"][0] for r in recs[skip:] if r["weights"][0]]
        m = [r["weights_measured"][t] / r["weights_measured"][0] for r in recs[skip:]
             if r["weights_measured"][0] and r["weights_measured"][t]]
        if f and m:
            out.append("%d/0: %.3g vs %.3g" % (t, statistics.median(f), statistics.median(m)))
    return "; ".join(out)


def speed_spread(recs):
    """Median and 90th percentile over the cycles of the slowest rank's
    time per integrator step over the fastest's, or None."""
    q = []
    for r in recs:
        # the reductions over the ranks that timed a step (min, max)
        ns = r.get("rank_reaction_step_ns")
        if ns and r["ranks"] > 1 and ns["min"]:
            q.append(ns["max"] / ns["min"])
    if not q:
        return None
    q.sort()
    return statistics.median(q), q[min(len(q) - 1, int(0.9 * len(q)))]


def run_metrics(recs):
    last = recs[-1]
    P = last["ranks"]
    work = sum(r["t_rank_max"] for r in recs)
    # only a fit can disagree with the measurement: count weights are all
    # 1, measured weights are the measurement
    ok, n = fit_agreement(recs) if last["lb_weights"] == "timing" else (0, 0)
    return {
        "problem": last["problem"], "mode": last["lb_weights"], "ranks": P, "cycles": len(recs),
        "total": last["total_s"], "lost": last["lost_rank_s"], "work": work,
        "lost_work": 100 * last["lost_rank_s"] / (P * work) if work > 0 else 0.0,
        "lost_run": 100 * last["lost_rank_s"] / (P * last["total_s"]) if last["total_s"] > 0 else 0.0,
        "mean_i": statistics.mean(r["weighed_imbalance_pct"] for r in recs),
        "fit_ok": ok, "fit_n": n,
        "ratios": ratio_medians(recs) if last["lb_weights"] == "timing" else "",
        "speed": speed_spread(recs),
    }


def spread(xs, fmt="%.1f"):
    if len(xs) == 1:
        return fmt % xs[0]
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(xs), min(xs), max(xs))


def tables(runs):
    out = []
    for prob in sorted({r["problem"] for r in runs}):
        mine = [r for r in runs if r["problem"] == prob]
        modes = [m for m in MODES if any(r["mode"] == m for r in mine)]
        out.append("### %s, %d ranks\n" % (prob, mine[0]["ranks"]))
        out.append("| weights | runs | cycles | mean I% | lost % of work | lost % of run | total s | work s | fit within 15% (cycles > 3) | cost ratios fitted vs measured (medians, per run) | rank speed max/min (median, p90; per run) |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for m in modes:
            rs = [r for r in mine if r["mode"] == m]
            fit = ", ".join("%d/%d" % (r["fit_ok"], r["fit_n"]) for r in rs) if any(r["fit_n"] for r in rs) else "-"
            ratios = " / ".join(r["ratios"] for r in rs if r["ratios"]) or "-"
            speed = ", ".join("%.3f, %.3f" % r["speed"] for r in rs if r["speed"]) or "-"
            out.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                m, len(rs), spread([r["cycles"] for r in rs], "%d"), spread([r["mean_i"] for r in rs]),
                spread([r["lost_work"] for r in rs]), spread([r["lost_run"] for r in rs], "%.2f"),
                spread([r["total"] for r in rs]), spread([r["work"] for r in rs], "%.2f"), fit, ratios, speed))
        count = [r for r in mine if r["mode"] == "count"]
        for m in modes:
            if m == "count" or not count:
                continue
            rs = [r for r in mine if r["mode"] == m]
            k = min(len(rs), len(count))
            removed = ["%.0f%%" % (100 * (1 - rs[i]["lost"] / count[i]["lost"])) if count[i]["lost"] > 0 else "-" for i in range(k)]
            speed = ["%.2f" % (count[i]["total"] / rs[i]["total"]) for i in range(k)]
            wspeed = ["%.2f" % (count[i]["work"] / rs[i]["work"]) for i in range(k)]
            out.append("\n%s against count, run by run: share of count's lost rank-time removed %s; run time count/%s %s (wall), %s (work)"
                       % (m, ", ".join(removed), m, ", ".join(speed), ", ".join(wspeed)))
        out.append("")
    return "\n".join(out) + "\n"


def plot(runs, path):
    probs = sorted({r["problem"] for r in runs})
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    labelled = set()
    for pi, prob in enumerate(probs):
        for mi, m in enumerate(MODES):
            rs = [r for r in runs if r["problem"] == prob and r["mode"] == m]
            if not rs:
                continue
            x = pi * (len(MODES) + 1) + mi
            label = None if m in labelled else m
            labelled.add(m)
            axes[0].scatter([x] * len(rs), [r["lost_work"] for r in rs], color="C%d" % mi, label=label)
            axes[1].scatter([x] * len(rs), [r["total"] for r in rs], color="C%d" % mi, label=label)
    for ax, yl in zip(axes, ("lost to imbalance, % of ranks x local work", "run time, s (wall)")):
        ax.set_xticks([pi * (len(MODES) + 1) + 1 for pi in range(len(probs))])
        ax.set_xticklabels(probs)
        ax.set_ylabel(yl)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("weights study: count, timing and measured weights (one dot per run)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", dest="out", default=".", help="output directory (created if missing)")
    ap.add_argument("reports", nargs="+")
    a = ap.parse_args(argv)
    runs = []
    for p in sorted(a.reports):
        try:
            runs.append(run_metrics(load(p)))
        except (OSError, ValueError, KeyError) as e:
            raise SystemExit("weights_study.py: error: %s: %s" % (p, e))
    os.makedirs(a.out, exist_ok=True)
    md = tables(runs)
    with open(os.path.join(a.out, "weights-study.md"), "w") as f:
        f.write(md)
    plot(runs, os.path.join(a.out, "weights-study.png"))
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
