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
  table     methods.md of three methods given out of order, with repetitions:
            sorted by median wall time, the fastest named first, at most 8
            columns each defined, a rebalance that moved nothing not
            counted, its I% column ranking the methods as imbalance.png's
            summary does (and equal to the mean over cycles of the median
            over repetitions); time.png has no balancer bar for none
  pages     14 methods that decided: imbalance.png with a panel each and
            no panel with more than one coloured line beside the grey
            others, decision.png split into pages, every
            figure at most 1600 px tall, no legend over a title; count
            weights without -lb_threshold: decision.png and weights.png not
            written, one line each saying why, the older pages removed
  poisson   poisson-bench.png: a tick per cycle's cells on the x axis
  loads     loads.png: its points are the per-rank loads of the side file
            (each made-up report's own, through postprocess/report_ranks.py)

    check_plots.py dir OUTDIR REPORT.jsonl ...

checks a folder written by cycle_plots.py --repeats (compare-methods.sh)
from these reports: methods.md's form and its rows against the reports
(order by median wall time, the I% column recomputed here), every PNG at
most 1600 px tall.
The figures are caught at savefig, so their axes can be read.
"""
import contextlib
import glob
import io
import json
import os
import re
import statistics
import struct
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.figure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
POST = os.path.join(HERE, "..", "..", "postprocess")
sys.path.insert(0, POST)
import report_ranks  # noqa: E402
SAVED = {}
_savefig = matplotlib.figure.Figure.savefig


def catch(self, path, *a, **k):
    """Keeps the figure; savefig's drawing sets the tick labels and the
    positions the checks read, so it is drawn once."""
    SAVED[os.path.basename(str(path))] = self
    return _savefig(self, path, *a, **k)


matplotlib.figure.Figure.savefig = catch
import matplotlib.pyplot as plt  # noqa: E402

plt.close = lambda *a, **k: None  # keep the caught figures


def fail(msg):
    print("check_plots.py: FAIL: " + msg)
    sys.exit(1)


def stats(v):
    """A per-rank field as a record holds it."""
    return {"min": min(v), "mean": sum(v) / len(v), "max": max(v), "argmax": v.index(max(v))}


def loads(c):
    """The made-up per-rank loads of cycle c (predicted, measured), one per rank."""
    return [0.9 + 0.01 * c, 1.1 - 0.01 * c], [0.95 - 0.02 * c, 1.05 + 0.02 * c]


def report(path, problem="darcy-transport", method="second-order", weights="timing", cycles=12, decide=True, wall=0.1, ipct=12.0):
    """A made-up balancing report with its side file: lb_decision cycles
    through every kind; cycle 0 decides to rebalance and moves no cell.
    wall: each cycle's wall time; ipct: the phase model's I% (plus 0, 1 or 2)."""
    kinds = ["rebalance", "gain", "below_floor", "below_cost"]
    with open(path, "w") as f, open(path + ".ranks", "wb") as side:
        total = 0.0
        for c in range(cycles):
            total += wall + 0.001 * c
            d = kinds[c % 4] if decide else "always"
            pred, meas = loads(c)
            per_rank = {"rank_time": [0.05, 0.06], "rank_load_predicted": pred, "rank_load_measured": meas,
                        "phases.pressure.own_cpu": [0.04, 0.05], "phases.transport.own_cpu": [0.02, 0.01]}
            at = report_ranks.write_block(side, c, "0000abcd", 2, per_rank)
            f.write(json.dumps({
                "problem": problem, "mesh": "builtin:unit", "ranks": 2, "cycle": c, "run_id": "0000abcd",
                "ranks_file": os.path.basename(path) + ".ranks", "ranks_offset": at, "cells": 1000 + 10 * c,
                "lb_method": method, "lb_weights": weights, "weighed_imbalance_pct": 4.0 + c,
                "decision_imbalance_pct": 3.0 if d == "below_floor" else 10.0 + c,
                "weighed_kept_imbalance_pct": 2.0, "cycle_imbalance_pct": ipct + c % 3, "weighed_predicted_imbalance_pct": 5.0,
                "rank_time": stats(per_rank["rank_time"]), "lost_rank_s": 0.0012 * (c + 1), "excess_loss_rank_s": 8.34162e-5 * (c % 4),
                "balance_cost_rank_s": None if c == 0 else 2.5e-5, "predicted_cycle_gain_rank_s": 4.2e-5,
                "lb_decision": d, "rebalanced": d in ("rebalance", "gain", "always"), "total_s": total, "t_solve": 0.07,
                "migrated_cells_tot": 5 * c, "lb_total_s": 0.0004 * (c + 1), "migrate_total_s": 0.00002 * c,
                "comm_edges_added": 0, "fit_smape": 3.0, "rank_load_predicted": stats(pred), "rank_load_measured": stats(meas),
                "weights": [1.0, 2.0], "model_total_s": 0.07 * (c + 1), "lost_s": 0.01 * (c + 1),
                "phases": {k: {"own_cpu": stats(per_rank["phases.%s.own_cpu" % k])} for k in ("pressure", "transport")}}) + "\n")
    return path


def plots(args):
    from cycle_plots import main
    try:
        main(args)
    except SystemExit as e:
        fail("cycle_plots.py stopped: %s" % e)


MAX_PX = 1600


def png_height(path):
    """The height in pixels from the PNG header (IHDR: width, height)."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])[1]


def check_heights(out):
    pngs = sorted(glob.glob(os.path.join(out, "*.png")))
    if not pngs:
        fail("no PNG in %s" % out)
    tall = ["%s %d px" % (os.path.basename(p), png_height(p)) for p in pngs if png_height(p) > MAX_PX]
    if tall:
        fail("figures taller than %d px: %s" % (MAX_PX, ", ".join(tall)))
    return [os.path.basename(p) for p in pngs]


def methods_table(out):
    """methods.md's header cells, rows (cells) and text; fails on a table
    of more than 8 columns or a column not defined under it."""
    with open(os.path.join(out, "methods.md")) as f:
        text = f.read()
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]
    if len(head) > 8:
        fail("methods.md: %d columns: %s" % (len(head), head))
    for c in head:
        if "\n- **%s**: " % c not in text:
            fail("methods.md: column %r not defined under the table" % c)
    if any(len(r) != len(head) for r in rows):
        fail("methods.md: a row without %d cells" % len(head))
    first = re.search(r"Fastest here: \*\*(.+?)\*\*", text)
    if not first or first.group(1) != rows[0][0]:
        fail("methods.md: the fastest named (%s) is not the first row (%s)" % (first and first.group(1), rows[0][0]))
    walls = [float(r[head.index("wall s")].split()[0]) for r in rows]
    if walls != sorted(walls):
        fail("methods.md: rows not sorted by wall time: %s" % walls)
    return head, rows, text


def i_order(head, rows):
    """The methods ranked by methods.md's I% column, lowest first."""
    col = [i for i, c in enumerate(head) if c.startswith("mean I%")]
    if len(col) != 1:
        fail("methods.md: no single mean I% column in %s" % head)
    return [r[0] for r in sorted(rows, key=lambda r: float(r[col[0]]))], col[0]


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
    elif case == "table":
        # given slowest first, the I% ranking another order again
        paths = [report(os.path.join(work, "s%d.jsonl" % k), method="sfc", wall=w, ipct=10.0) for k, w in ((1, 0.3), (2, 0.32))]
        paths.append(report(os.path.join(work, "n1.jsonl"), method="none", weights="count", wall=0.1, ipct=30.0))
        paths.append(report(os.path.join(work, "o1.jsonl"), wall=0.2, ipct=5.0))
        plots(["--repeats", "-o", out] + paths)
        head, rows, text = methods_table(out)
        names = [r[0] for r in rows]
        if names != ["none/count", "second-order/timing", "sfc/timing"]:
            fail("methods.md: rows %s, not by wall time" % names)
        wall = {r[0]: r[1] for r in rows}
        if not re.fullmatch(r"[0-9.]+ \[[0-9.]+, [0-9.]+\]", wall["sfc/timing"]) or not re.fullmatch(r"[0-9.]+", wall["second-order/timing"]):
            fail("methods.md: wall cells %r: the median [least, greatest] of 2 runs, one run's value alone" % wall)
        row = dict(zip(head, rows[1]))
        # 6 cycles rebalanced, cycle 0 moved no cell
        if row["rebalances"] != "5":
            fail("methods.md: %s rebalances, not 5 (cycle 0 moved nothing)" % row["rebalances"])
        if rows[0][-1] != "measure only":
            fail("methods.md: none's balancing cell %r" % rows[0][-1])
        order, col = i_order(head, rows)
        fig = SAVED["imbalance.png"]
        box = [ax for ax in fig.axes if ax.get_title().startswith("all cycles")][0]
        plotted = labels(box, "y")
        if plotted != order:
            fail("imbalance.png's summary ranks %s, methods.md's I%% %s" % (plotted, order))
        # 12 cycles of ipct + c % 3: the mean is ipct + 1
        want = {"sfc/timing": "11.0", "none/count": "31.0", "second-order/timing": "6.0"}
        got = {r[0]: r[col] for r in rows}
        if got != want:
            fail("methods.md: I%% %s, expected %s" % (got, want))
        ax = SAVED["time.png"].axes[2]
        none_bars = [b for b in ax.patches if abs(b.get_y() + b.get_height() / 2 - 0) < 0.5 and b.get_width() > 0]
        if none_bars or not any("measure only" in t.get_text() for t in ax.texts):
            fail("time.png: none has %d overhead bars" % len(none_bars))
        print("table ok: %s; I%% ranks %s" % (", ".join(names), ", ".join(order)))
    elif case == "pages":
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "decision.png"), "w").close()  # an older run's
        reps = [report(os.path.join(work, "p%02d.jsonl" % i), method="m%02d" % i) for i in range(14)]
        plots(["--threshold", "5", "-o", out] + reps)
        panels = [ax for ax in SAVED["imbalance.png"].axes if ax.get_lines() and ax.get_title().startswith("m")]
        if len(panels) != 14:
            fail("imbalance.png: %d per-method panels, not 14" % len(panels))
        for ax in panels:
            coloured = [ln for ln in ax.get_lines() if ln.get_color() != "0.82"]
            if len(coloured) != 1:
                fail("imbalance.png: panel %s has %d coloured lines" % (ax.get_title(), len(coloured)))
        pngs = check_heights(out)
        if "decision.png" in pngs or "decision-1.png" not in pngs or "decision-2.png" not in pngs:
            fail("14 runs that decided: %s" % pngs)
        for name, fig in SAVED.items():
            title = fig._suptitle
            if title is None:
                continue
            r = fig.canvas.get_renderer()
            top = title.get_window_extent(r)
            for leg in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
                if leg.get_window_extent(r).overlaps(top):
                    fail("%s: a legend over the title" % name)
        SAVED.clear()
        count = [report(os.path.join(work, "c%d.jsonl" % i), method=m, weights="count", decide=False) for i, m in enumerate(("none", "sfc"))]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            plots(["-o", out] + count)
        said = err.getvalue()
        for want in ("cycle_plots.py: decision.png not written: no run decided", "cycle_plots.py: weights.png not written: "):
            if want not in said:
                fail("count weights: no line %r in %r" % (want, said))
        left = [p for p in os.listdir(out) if p.startswith(("decision", "weights"))]
        if left:
            fail("older figures left: %s" % left)
        print("pages ok: 14 imbalance panels of one method each; %s; %s" % (", ".join(pngs), said.strip().replace("\n", "; ")))
    elif case == "loads":
        plots(["-o", out, report(os.path.join(work, "l1.jsonl"), cycles=3), report(os.path.join(work, "l2.jsonl"), method="sfc", cycles=3)])
        got = sorted(tuple(p) for ax in SAVED["loads.png"].axes for col in ax.collections for p in col.get_offsets().tolist())
        want = sorted((x, y) for _ in range(2) for c in range(3) for x, y in zip(*loads(c)))
        if len(got) != len(want) or any(abs(a - b) > 1e-12 for g, w in zip(got, want) for a, b in zip(g, w)):
            fail("loads.png: points %s, the side files' loads %s" % (got, want))
        print("loads ok: %d points, each rank's predicted and measured load of the side files" % len(got))
    elif case == "poisson":
        recs = []
        for c, cells in enumerate([1024, 1400, 1948]):
            recs.append({"cells": cells, "dofs": 4 * cells, "ksp_its": 7, "rank_peak_rss": stats([5e7, 5e7]), "dim": 2, "degree": 2,
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


def check_dir(out, paths):
    """A compare-methods.sh folder against its reports: methods.md's rows
    by median wall time, its I% the mean over cycles of the median over
    repetitions of cycle_imbalance_pct (recomputed here), every PNG at most
    1600 px tall."""
    head, rows, _ = methods_table(out)
    by = {}
    for p in paths:
        with open(p) as f:
            recs = [json.loads(ln) for ln in f if ln.strip()]
        label = "%s/%s%s" % (recs[0]["lb_method"], recs[0]["lb_weights"], " +offload" if recs[0].get("offload") else "")
        by.setdefault(label, []).append(recs)
    wall = {k: statistics.median(recs[-1]["total_s"] for recs in reps) for k, reps in by.items()}
    want = sorted(by, key=lambda k: wall[k])
    if [r[0] for r in rows] != want:
        fail("methods.md: rows %s, the reports' median wall times give %s" % ([r[0] for r in rows], want))
    order, col = i_order(head, rows)
    for r in rows:
        cyc = {}
        for recs in by[r[0]]:
            for rec in recs:
                cyc.setdefault(rec["cycle"], []).append(rec["cycle_imbalance_pct"])
        mean = statistics.fmean(statistics.median(v) for v in cyc.values())
        if abs(float(r[col]) - mean) > 0.051:
            fail("methods.md: %s I%% %s, its reports %.2f" % (r[0], r[col], mean))
    pngs = check_heights(out)
    print("dir ok: %d methods, fastest %s, lowest I%% %s; %s" % (len(rows), rows[0][0], order[0], ", ".join(pngs)))


if __name__ == "__main__":
    if sys.argv[1] == "dir":
        check_dir(sys.argv[2], sys.argv[3:])
    else:
        main(sys.argv[1], sys.argv[2])
