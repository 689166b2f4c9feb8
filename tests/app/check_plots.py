#!/usr/bin/env python3
"""Checks the figures of postprocess/cycle_plots.py and poisson_bench.py on
made-up reports (tests plots_*): no run needed.

    check_plots.py CASE WORKDIR

CASE is one of
  mixed     reports of two problems: one error line naming both, exit 1
  time      time.png: linear x axes, plain tick labels, no offset text
  decision  decision.png: rebalances on measured loss and on predicted gain
            drawn apart, the cost (threshold) and the -lb_threshold floor
            drawn, plain tick labels (no "x10^")
  many      imbalance.png with 14 methods: no panel with more than one
            coloured line beside the grey others
  poisson   poisson-bench.png: a tick per cycle's cells on the x axis
The figures are caught at savefig, so their axes can be read.
"""
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.figure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
POST = os.path.join(HERE, "..", "..", "postprocess")
sys.path.insert(0, POST)
SAVED = {}
_savefig = matplotlib.figure.Figure.savefig


def catch(self, path, *a, **k):
    SAVED[os.path.basename(str(path))] = self
    self.canvas.draw()
    return _savefig(self, path, *a, **k)


matplotlib.figure.Figure.savefig = catch
import matplotlib.pyplot as plt  # noqa: E402

plt.close = lambda *a, **k: None  # keep the caught figures


def fail(msg):
    print("check_plots.py: FAIL: " + msg)
    sys.exit(1)


def report(path, problem="darcy-transport", method="second-order", weights="timing", cycles=12, decide=True):
    """A made-up balancing report: lb_decision cycles through every kind."""
    kinds = ["rebalance", "gain", "below_floor", "below_cost"]
    with open(path, "w") as f:
        total = 0.0
        for c in range(cycles):
            total += 0.1 + 0.001 * c
            d = kinds[c % 4] if decide else "always"
            f.write(json.dumps({
                "problem": problem, "mesh": "builtin:unit", "ranks": 2, "cycle": c, "cells": 1000 + 10 * c,
                "lb_method": method, "lb_weights": weights, "imbalance_pct": 3.0 if d == "below_floor" else 10.0 + c,
                "kept_imbalance_pct": 2.0, "cycle_imbalance_pct": 12.0 + c % 3, "predicted_imbalance_pct": 5.0,
                "rank_time": [0.05, 0.06], "lost_rank_s": 0.0012 * (c + 1), "excess_loss_rank_s": 8.34162e-5 * (c % 4),
                "balance_cost_rank_s": None if c == 0 else 2.5e-5, "predicted_cycle_gain_rank_s": 4.2e-5,
                "lb_decision": d, "rebalanced": d in ("rebalance", "gain", "always"), "total_s": total, "t_solve": 0.07,
                "migrated_cells_tot": 5 * c, "lb_total_s": 0.0004 * (c + 1), "migrate_total_s": 0.00002 * c,
                "comm_edges_added": 0, "fit_smape": 3.0, "rank_load_predicted": [0.9, 1.1], "rank_load_measured": [0.95, 1.05],
                "weights": [1.0, 2.0], "model_total_s": 0.07 * (c + 1), "lost_s": 0.01 * (c + 1),
                "phases": {"pressure": {"own_cpu": [0.04, 0.05]}, "transport": {"own_cpu": [0.02, 0.01]}}}) + "\n")
    return path


def plots(args):
    from cycle_plots import main
    try:
        main(args)
    except SystemExit as e:
        fail("cycle_plots.py stopped: %s" % e)


def labels(ax, axis):
    return [t.get_text() for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()) if t.get_text()]


def main(case, work):
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, case)
    if case == "mixed":
        a = report(os.path.join(work, "a.jsonl"), problem="darcy-transport")
        b = report(os.path.join(work, "b.jsonl"), problem="reactive-transport")
        p = subprocess.run([sys.executable, os.path.join(POST, "cycle_plots.py"), "-o", out, a, b], capture_output=True, text=True)
        lines = (p.stdout + p.stderr).strip().splitlines()
        if p.returncode != 1 or len(lines) != 1 or "darcy-transport: a.jsonl" not in lines[0] or "reactive-transport: b.jsonl" not in lines[0]:
            fail("two problems: exit %d, output %r" % (p.returncode, lines))
        if os.path.exists(os.path.join(out, "imbalance.png")):
            fail("two problems: a figure was written")
        print("mixed ok: " + lines[0])
    elif case == "time":
        plots(["-o", out, report(os.path.join(work, "t1.jsonl")), report(os.path.join(work, "t2.jsonl"), method="sfc")])
        fig = SAVED["time.png"]
        for ax in fig.axes:
            if ax.get_xscale() != "linear":
                fail("time.png: a %s x axis under bars" % ax.get_xscale())
            off = ax.xaxis.get_offset_text().get_text()
            if off:
                fail("time.png: x axis offset %r" % off)
            if any("e" in t.lower() or "\u00d7" in t for t in labels(ax, "x")):
                fail("time.png: tick labels %r" % labels(ax, "x"))
        # the loss panel stacks each phase's loss: 12 cycles of 5 ms in
        # pressure and 5 ms in transport, 120 ms in all, lost_s's 0.12 s
        ax = fig.axes[1]
        unit = {"time (s)": 1.0, "time (ms)": 1e-3}.get(ax.get_xlabel())
        rows = {}
        for bar in ax.patches:
            rows[round(bar.get_y() + bar.get_height() / 2)] = rows.get(round(bar.get_y() + bar.get_height() / 2), 0.0) + bar.get_width()
        if unit is None or sorted(rows) != [0, 1] or any(abs(w * unit - 0.12) > 1e-9 for w in rows.values()):
            fail("time.png: the phases' losses %r (%s), expected 0.12 s per run" % (rows, ax.get_xlabel()))
        print("time ok: %s; lost by phase %.3g s per run" % ("; ".join(ax.get_xlabel() for ax in fig.axes), rows[0] * unit))
    elif case == "decision":
        plots(["--threshold", "5", "-o", out, report(os.path.join(work, "d1.jsonl"))])
        fig = SAVED["decision.png"]
        names = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
        for want in ("measured loss", "predicted gain", "threshold", "floor"):
            if not any(want in n for n in names):
                fail("decision.png: no legend entry with %r in %r" % (want, names))
        floor = [ln for ax in fig.axes for ln in ax.get_lines() if list(ln.get_ydata()) == [5, 5]]
        if not floor:
            fail("decision.png: no line at the -lb_threshold 5")
        for ax in fig.axes:
            for t in labels(ax, "y"):
                if "10^" in t or "\\times" in t or "x10" in t or "$" in t:
                    fail("decision.png: tick label %r" % t)
        print("decision ok: %s" % names)
    elif case == "many":
        reps = [report(os.path.join(work, "m%02d.jsonl" % i), method="m%02d" % i) for i in range(14)]
        plots(["-o", out] + reps)
        fig = SAVED["imbalance.png"]
        panels = [ax for ax in fig.axes if ax.get_lines() and ax.get_title().startswith("m")]
        if len(panels) != 14:
            fail("imbalance.png: %d per-method panels, not 14" % len(panels))
        for ax in panels:
            coloured = [ln for ln in ax.get_lines() if ln.get_color() != "0.82"]
            if len(coloured) != 1:
                fail("imbalance.png: panel %s has %d coloured lines" % (ax.get_title(), len(coloured)))
        print("many ok: 14 panels of one method each")
    elif case == "poisson":
        recs = []
        for c, cells in enumerate([1024, 1400, 1948]):
            recs.append({"cells": cells, "dofs": 4 * cells, "ksp_its": 7, "rank_peak_rss": [5e7, 5e7], "dim": 2, "degree": 2,
                         "problem": "interface", "mesh": "builtin:unit", "ranks": 2, "t_solve": 0.05, "t_estimate": 0.01,
                         "t_adapt": 0.01, "t_partition": 0.001, "t_output": 0.0, "t_setup": 0.01, "t_assembly": 0.01, "t_ksp": 0.03})
        paths = []
        for name in ("2d-q2-assembled-amg-1.jsonl", "2d-q2-matrix-free-mg-1.jsonl"):
            paths.append(os.path.join(work, name))
            with open(paths[-1], "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in recs)
        import poisson_bench
        sys.argv = ["poisson_bench.py", "-o", out] + paths
        poisson_bench.main()
        ax = SAVED["poisson-bench.png"].axes[0]
        ticks = labels(ax, "x")
        if ticks != ["1024", "1400", "1948"]:
            fail("poisson-bench.png: x ticks %r, not the cycles' cells" % ticks)
        print("poisson ok: x ticks %s" % ticks)
    else:
        fail("unknown case " + case)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
