#!/usr/bin/env python3
"""Plots and a method table from amr2d/amr3d reports (-report FILE.jsonl).

    python3 postprocess/cycle_plots.py [-o DIR] REPORT.jsonl [MORE.jsonl ...]

Each report is one run (one line per cycle, the fields of the balancing
cycle).  Writes into DIR (default: the current directory):

  imbalance.png  measured imbalance I% of the local work per cycle, one line per run
  migrated.png   cells migrated per cycle, one line per run
  loads.png      the load each rank was predicted to have against the load it
                 measured (both as load / mean), every rank of every cycle
  time.png       time breakdown per run: solve time (t_solve), time lost to imbalance
                 (sum of (t_max - t_avg) N over cycles, divided by N),
                 balancing and migrating
  decision.png   the -lb_threshold rule per run: the time lost to imbalance
                 since the last rebalance (beyond the least loss of a cycle
                 since then) against the predicted cost of rebalancing,
                 per cycle, with the cycles that rebalanced
  weights.png    the weight per load type over the cycles (solid) against the
                 measured per-cell costs' mean per type, weights_measured, scaled
                 the same way (dashed), one panel per run that measured them
                 (problems that time their cells, e.g. reactive-transport)
  methods.md     one row per run comparing the methods (also printed)

A run is labelled "method/weights"; runs with the same label get their file
name appended.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    if not recs:
        raise SystemExit("cycle_plots.py: error: %s has no records" % path)
    for key in ("lb_method", "imbalance_pct", "rank_time", "lost_rank_s", "excess_loss_rank_s"):
        if key not in recs[0]:
            raise SystemExit("cycle_plots.py: error: %s has no field '%s' (not a report of the balancing cycle)" % (path, key))
    return recs


def labels(paths, runs):
    base = ["%s/%s" % (r[0]["lb_method"], r[0]["lb_weights"]) for r in runs]
    out = []
    for i, b in enumerate(base):
        out.append(b if base.count(b) == 1 else "%s (%s)" % (b, os.path.splitext(os.path.basename(paths[i]))[0]))
    return out


def summary(recs):
    last = recs[-1]
    n = last["ranks"]
    solve = sum(r["t_solve"] for r in recs)
    total = last["total_s"]
    lost = last["lost_rank_s"]
    return {
        "ranks": n,
        "cycles": len(recs),
        "cells": last["cells"],
        "total": total,
        "solve": solve,
        "lost": lost,
        "lost_share": 100 * lost / (n * total) if total > 0 else 0.0,
        "mean_i": sum(r["imbalance_pct"] for r in recs) / len(recs),
        "mean_pred": sum(r["predicted_imbalance_pct"] for r in recs) / len(recs),
        "migrated": sum(r["migrated_cells_tot"] for r in recs),
        "rebalances": sum(1 for r in recs if r["rebalanced"]),
        "lb": last["lb_total_s"],
        "mig": last["migrate_total_s"],
        "lb_share": 100 * (last["lb_total_s"] + last["migrate_total_s"]) / total if total > 0 else 0.0,
        "added": sum(r["comm_edges_added"] for r in recs),
        "smape": sum(r["fit_smape"] for r in recs) / len(recs),
    }


def per_cycle_plot(runs, names, key, ylabel, path, title):
    fig, ax = plt.subplots(figsize=(7, 4))
    for recs, name in zip(runs, names):
        ax.plot([r["cycle"] for r in recs], [r[key] for r in recs], marker=".", label=name)
    ax.set_xlabel("cycle")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def loads_plot(runs, names, path):
    fig, ax = plt.subplots(figsize=(5, 5))
    hi = 1.0
    for recs, name in zip(runs, names):
        xs = [p for r in recs for p in r["rank_load_predicted"]]
        ys = [m for r in recs for m in r["rank_load_measured"]]
        hi = max([hi] + xs + ys)
        ax.scatter(xs, ys, s=8, alpha=0.6, label=name)
    ax.plot([0, hi], [0, hi], color="black", lw=0.8)
    ax.set_xlabel("predicted load per rank (weights, mean 1)")
    ax.set_ylabel("measured load per rank (local work, mean 1)")
    ax.set_title("predicted against measured load")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def weights_plot(runs, names, path):
    """Fitted (or count/measured) weights against weights_measured per type;
    False when no run measured per-cell costs."""
    measured = [(recs, name) for recs, name in zip(runs, names)
                if any(x is not None for r in recs for x in r.get("weights_measured", []))]
    if not measured:
        return False
    cols = min(3, len(measured))
    rows = (len(measured) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.2 * rows), squeeze=False)
    for k, (recs, name) in enumerate(measured):
        ax = axes[k // cols][k % cols]
        cyc = [r["cycle"] for r in recs]
        for t in range(len(recs[0]["weights"])):
            nan = float("nan")
            ax.plot(cyc, [r["weights"][t] for r in recs], color="C%d" % t, label="type %d: weights" % t)
            ax.plot(cyc, [nan if r["weights_measured"][t] is None else r["weights_measured"][t] for r in recs], color="C%d" % t,
                    ls="--", label="type %d: measured" % t)
        ax.set_yscale("log")
        ax.set_xlabel("cycle")
        ax.set_ylabel("cost per cell (mean cell weight 1)")
        ax.set_title(name, fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    for k in range(len(measured), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def time_plot(sums, names, path):
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(names) + 2), 4))
    x = range(len(names))
    parts = [
        ("solve (max over ranks)", [s["solve"] for s in sums]),
        ("lost to imbalance / ranks", [s["lost"] / s["ranks"] for s in sums]),
        ("balancing", [s["lb"] for s in sums]),
        ("migrating", [s["mig"] for s in sums]),
    ]
    for i, (label, vals) in enumerate(parts):
        ax.bar([xi + (i - 1.5) * 0.2 for xi in x], vals, width=0.2, label=label)
    ax.plot(list(x), [s["total"] for s in sums], "k_", markersize=20, label="total run time")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("seconds")
    ax.set_title("time breakdown")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def decision_plot(runs, names, path):
    fig, axes = plt.subplots(len(runs), 1, figsize=(7, 2.6 * len(runs)), squeeze=False, sharex=True)
    for ax, recs, name in zip(axes[:, 0], runs, names):
        cyc = [r["cycle"] for r in recs]
        ax.plot(cyc, [r["excess_loss_rank_s"] for r in recs], lw=1, label="loss since last rebalance, beyond the residual")
        # no cost on cycles that had no chance to balance (null in the report)
        ax.plot(cyc, [r["balance_cost_rank_s"] if r["balance_cost_rank_s"] is not None else float("nan") for r in recs],
                lw=1, label="predicted cost of rebalancing")
        reb = [r for r in recs if r["rebalanced"]]
        ax.plot([r["cycle"] for r in reb], [r["excess_loss_rank_s"] for r in reb], "k|", markersize=8, label="rebalanced")
        ax.set_yscale("symlog", linthresh=1e-4)
        ax.set_ylabel("rank-seconds")
        ax.set_title("%s: %d rebalances in %d cycles" % (name, len(reb), len(recs)), fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("cycle")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def table(sums, names):
    head = ("| run | ranks | cycles | cells | total s | lost to imbalance rank-s (% of run) | mean I% measured | "
            "mean I% predicted | fit sMAPE % | rebalances | migrated cells | new rank pairs | balancing s | migrating s | balancing + migrating % |")
    rows = [head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
    for s, n in zip(sums, names):
        rows.append("| %s | %d | %d | %d | %.3f | %.4f (%.1f%%) | %.1f | %.1f | %.1f | %d | %d | %d | %.4f | %.4f | %.2f |" % (
            n, s["ranks"], s["cycles"], s["cells"], s["total"], s["lost"], s["lost_share"], s["mean_i"], s["mean_pred"],
            s["smape"], s["rebalances"], s["migrated"], s["added"], s["lb"], s["mig"], s["lb_share"]))
    return "\n".join(rows) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", dest="out", default=".", help="output directory (created if missing)")
    ap.add_argument("reports", nargs="+")
    a = ap.parse_args(argv)
    runs = []
    for p in a.reports:
        try:
            runs.append(load(p))
        except (OSError, ValueError) as e:
            raise SystemExit("cycle_plots.py: error: %s: %s" % (p, e))
    names = labels(a.reports, runs)
    sums = [summary(r) for r in runs]
    os.makedirs(a.out, exist_ok=True)
    per_cycle_plot(runs, names, "imbalance_pct", "measured imbalance I% of the local work", os.path.join(a.out, "imbalance.png"),
                   "imbalance per cycle")
    per_cycle_plot(runs, names, "migrated_cells_tot", "cells migrated", os.path.join(a.out, "migrated.png"), "migration per cycle")
    loads_plot(runs, names, os.path.join(a.out, "loads.png"))
    time_plot(sums, names, os.path.join(a.out, "time.png"))
    decision_plot(runs, names, os.path.join(a.out, "decision.png"))
    weights_plot(runs, names, os.path.join(a.out, "weights.png"))
    md = table(sums, names)
    with open(os.path.join(a.out, "methods.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
