#!/usr/bin/env python3
"""Plots and the 2048-rank table of config/trace-study.sh.

    python3 postprocess/trace_study.py -o OUTDIR chain.jsonl tasks.jsonl synthetic.jsonl

For every recorded workload (the trace file of a -scenario trace:FILE run)
and mode (chain, tasks), OUTDIR/WORKLOAD-MODE.png has four panels against
the number of ranks P, one line per method: iterations, migration (chain:
migrated cells / cells; tasks: migrated tasks / tasks), imbalance after
balancing (max/avg - 1 of the realised parts or ranks) and the method's run
time.  OUTDIR/table.md is Lieber et al.'s Fig. 2 kind: at 2048 ranks, one
row per method, POINT, BOX (lbbench task mode on mesh3d:16x16x8) and the
real workloads (task mode) side by side: iterations, imbalance,
MigrationTot and EdgeCutTot; under it the initial imbalance and each
method's beyond_own (the share of the load its flows ask ranks to send
beyond their own tasks, which one pass of task selection cannot).
"""
import argparse
import json
import os


def load(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def workload(r):
    """The scenario's name: a trace's file name, or point / box."""
    s = r["scenario"]
    if s.startswith("trace:"):
        name = os.path.basename(s[6:].rsplit(":", 1)[0] if s.count(":") > 1 and s.rsplit(":", 1)[1].isdigit() else s[6:])
        return os.path.splitext(name)[0]
    return s


def mode(r):
    return "tasks" if "ntasks" in r or "tasks" in r else "chain"


def measures(r):
    """iterations, migration share, imbalance (max/avg - 1), run time."""
    if mode(r) == "chain":
        return r["iterations"], r["migrated_cells"] / r["cells"], r["max_over_avg"] - 1, r["runtime_s"]
    return r.get("iterations"), r["migration_tot"], r["imbalance"], r["runtime_s"]


# one style per method, the same in every figure (12 methods: colour,
# marker and line style together tell them apart)
STYLES = {}
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#393b79"]
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "<", ">", "*", "h", "p"]
LINES = ["-", "--", "-.", ":"]
FLOOR = 1e-6  # imbalance and migration below it are drawn at it (log axes)


def style(method):
    if method not in STYLES:
        k = len(STYLES)
        STYLES[method] = dict(color=COLOURS[k % len(COLOURS)], marker=MARKERS[k % len(MARKERS)], linestyle=LINES[k % len(LINES)])
    return STYLES[method]


def plots(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = {}
    for r in rows:
        if r["scenario"].startswith("trace:"):
            groups.setdefault((workload(r), mode(r)), []).append(r)
    for method in sorted({r["method"] for r in rows}):
        style(method)
    for (w, m), rs in sorted(groups.items()):
        moved = "cells" if m == "chain" else "tasks"
        names = ("iterations (count; Zoltan: none)",
                 "migration: %s moved / all %s" % (moved, moved),
                 "imbalance after balancing: max/avg - 1",
                 "run time of the method (s, wall)")
        fig, axes = plt.subplots(2, 2, figsize=(13, 8.5))
        handles, clipped = {}, set()
        for method in sorted({r["method"] for r in rs}):
            pts = sorted((r["ranks"], measures(r)) for r in rs if r["method"] == method)
            for k, ax in enumerate(axes.flat):
                xy = [(p, max(v[k], FLOOR) if k in (1, 2) else v[k]) for p, v in pts if v[k] is not None and (k in (1, 2) or v[k] > 0)]
                clipped.update(k for p, v in pts if k in (1, 2) and v[k] is not None and v[k] < FLOOR)
                if xy:
                    handles[method] = ax.plot(*zip(*xy), label=method, markersize=5, **style(method))[0]
        for k, ax in enumerate(axes.flat):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("ranks P (virtual)")
            ax.set_ylabel(names[k])
            ax.grid(True, which="major", alpha=0.3)
        for ax in (axes.flat[k] for k in sorted(clipped)):
            ax.axhline(FLOOR, color="0.6", linewidth=0.6)
            ax.annotate("values below %g drawn here" % FLOOR, (0.01, FLOOR), xycoords=("axes fraction", "data"), fontsize=7, color="0.4",
                        va="bottom")
        fig.legend(list(handles.values()), list(handles.keys()), loc="center left", bbox_to_anchor=(0.83, 0.5), fontsize=9, title="method")
        fig.suptitle("%s, %s mode: the app's recorded loads replayed on P ranks (lbbench -virtual)" % (w, "task" if m == "tasks" else m))
        fig.tight_layout(rect=(0, 0, 0.82, 0.96))
        fig.savefig(os.path.join(out, "%s-%s.png" % (w, m)), dpi=90)
        plt.close(fig)
        print("wrote", os.path.join(out, "%s-%s.png" % (w, m)))


def table(rows, out, P=2048):
    cells, loads, methods = {}, [], []
    for r in rows:
        if r["ranks"] != P or mode(r) != "tasks":
            continue
        w = workload(r)
        if w not in loads:
            loads.append(w)
        if r["method"] not in methods:
            methods.append(r["method"])
        cells[(r["method"], w)] = r
    loads.sort(key=lambda w: (w not in ("point", "box"), w != "point", w))
    lines = ["# %d ranks, task mode: iterations / imbalance / MigrationTot / EdgeCutTot" % P, "",
             "| method | " + " | ".join(loads) + " |", "| --- |" + " --- |" * len(loads)]
    for m in methods:
        row = []
        for w in loads:
            r = cells.get((m, w))
            if not r:
                row.append("")
                continue
            it = r.get("iterations")
            row.append("%s / %.3g / %.3g / %.3g" % ("-" if it is None else it, r["imbalance"], r["migration_tot"], r["edgecut_tot"]))
        lines.append("| %s | %s |" % (m, " | ".join(row)))
    lines += ["", "# %d ranks, task mode, before task selection: the initial imbalance (max/avg - 1) and beyond_own, the share of "
              "the total load the method asks ranks to send beyond their own tasks (one pass of task selection cannot)" % P, "",
              "| method | " + " | ".join(loads) + " |", "| --- |" + " --- |" * len(loads)]
    for m in methods:
        row = ["%.3g" % cells[(m, w)]["beyond_own"] if "beyond_own" in cells.get((m, w), {}) else "" for w in loads]
        if any(row):
            lines.append("| %s | %s |" % (m, " | ".join(row)))
    init = ["%.3g" % next((r["initial_imbalance"] for (mm, ww), r in cells.items() if ww == w and "initial_imbalance" in r), float("nan"))
            for w in loads]
    lines.append("| initial imbalance | %s |" % " | ".join(init))
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--out", default=".")
    p.add_argument("reports", nargs="+")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = load([r for r in a.reports if os.path.exists(r)])
    plots(rows, a.out)
    table(rows, a.out)


if __name__ == "__main__":
    main()
