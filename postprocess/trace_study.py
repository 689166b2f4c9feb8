#!/usr/bin/env python3
"""Plots and the 2048-rank table of config/trace-study.sh.

    python3 postprocess/trace_study.py -o OUTDIR chain.jsonl synthetic.jsonl line.jsonl

For every recorded workload (the trace file of a -scenario trace:FILE run)
and mode (chain, tasks), and for the non-local line case (rank loads from
line-P.loads files), OUTDIR/WORKLOAD-MODE.png has six panels against the
number of ranks P, one line per method: iterations, the modelled time of
the method, migration (chain: migrated cells / cells; tasks: migrated
tasks / tasks; rank loads: transfer_tot, the load moved / the total),
imbalance after balancing (max/avg - 1 of the realised parts or ranks),
the imbalance the method started from, and (task mode) the task edges
cut.  The modelled time is (rounds + collectives ceil(log2 P)) x LATENCY +
bytes / P / BANDWIDTH: a round of neighbour messages costs one latency, a
collective (a stop check, a prefix sum) a tree of log2 P of them, and the
bytes are spread over the ranks (the constants below).  OUTDIR/table.md
is Lieber et al.'s Fig. 2 kind: at 2048 ranks, one row per method, POINT
and BOX (task mode on mesh3d:16x16x8) and the recordings (chain mode, and
task mode where run) side by side, with each chain-mode method's largest
part over the exact 1D partition's (over_optimum); then, when BOX ran at
several P, Lieber et al.'s Fig. 3 kind: BOX in task mode against P, one
row per method (imbalance, MigrationTot, MigrationMax, modelled time,
EdgeCutTot).
"""
import argparse
import json
import math
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


def workload_of(r):
    """The scenario's name: a trace's file name, point / box, or the
    non-local line case (the study's line-P.loads)."""
    if r["scenario"].startswith("file:") and os.path.basename(r["scenario"]).startswith("line-"):
        return "non-local-line"
    return workload(r)


def method_of(r):
    """The method, and in task mode whether tasks hopped (-select_passes)."""
    return r["method"] + (" +hops" if r.get("select_max_passes", 1) > 1 else "")


def mode(r):
    if "ntasks" in r or "tasks" in r:
        return "tasks"
    return "chain" if "cells" in r else "loads"


LATENCY = 2e-6    # s per message round (one neighbour exchange)
BANDWIDTH = 1e10  # bytes per s at a rank


def modelled(r):
    """The method's modelled time: rounds and collectives in latencies,
    the bytes per rank at the bandwidth."""
    P = r["ranks"]
    rounds = r.get("rounds", 0) + r.get("collectives", 0) * math.ceil(math.log2(max(P, 2)))
    return rounds * LATENCY + r.get("bytes", 0) / P / BANDWIDTH


def measures(r):
    """iterations, modelled time, migration share, imbalance (max/avg - 1),
    the start's imbalance, edge cut (task mode)."""
    m = mode(r)
    if m == "chain":
        return (r["iterations"], modelled(r), r["migrated_cells"] / r["cells"], r["max_over_avg"] - 1,
                r.get("start_max_over_avg", float("nan")) - 1, None)
    if m == "loads":
        return r["iterations"], modelled(r), r["transfer_tot"], r["max_over_avg"] - 1, None, None
    return (r.get("iterations"), modelled(r) if "rounds" in r else None, r["migration_tot"], r["imbalance"], r.get("initial_imbalance"),
            r["edgecut_tot"])


# one style per method, the same in every figure (up to 16 methods and
# their +hops variants: colour, marker and line style tell them apart)
STYLES = {}
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#393b79",
           "#637939", "#8c6d31", "#843c39", "#7b4173"]
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "<", ">", "*", "h", "p", "d", "H", "8", "1"]
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
        w = workload_of(r)
        if w not in ("point", "box"):
            groups.setdefault((w, mode(r)), []).append(r)
    for method in sorted({method_of(r) for r in rows}):
        style(method)
    for (w, m), rs in sorted(groups.items()):
        moved = {"chain": "cells moved / all cells", "tasks": "tasks moved / all tasks", "loads": "load moved / total load"}[m]
        names = ("iterations (count; Zoltan: none)",
                 "modelled time of the method (s)",
                 "migration: " + moved,
                 "imbalance after balancing: max/avg - 1",
                 "imbalance at the start: max/avg - 1",
                 "task edges cut / all task edges")
        fig, axes = plt.subplots(2, 3, figsize=(17, 8.5))
        handles, clipped = {}, set()
        for method in sorted({method_of(r) for r in rs}):
            pts = sorted((r["ranks"], measures(r)) for r in rs if method_of(r) == method)
            for k, ax in enumerate(axes.flat):
                floor = k in (2, 3, 4, 5)
                xy = [(p, max(v[k], FLOOR) if floor else v[k]) for p, v in pts
                      if v[k] is not None and not math.isnan(v[k]) and (floor or v[k] > 0)]
                clipped.update(k for p, v in pts if floor and v[k] is not None and v[k] < FLOOR)
                if xy:
                    handles[method] = ax.plot(*zip(*xy), label=method, markersize=5, **style(method))[0]
        for k, ax in enumerate(axes.flat):
            if not ax.lines:
                ax.set_axis_off()
                continue
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("ranks P (virtual)")
            ax.set_ylabel(names[k])
            ax.grid(True, which="major", alpha=0.3)
        for ax in (axes.flat[k] for k in sorted(clipped)):
            ax.axhline(FLOOR, color="0.6", linewidth=0.6)
            ax.annotate("values below %g drawn here" % FLOOR, (0.01, FLOOR), xycoords=("axes fraction", "data"), fontsize=7, color="0.4",
                        va="bottom")
        fig.legend(list(handles.values()), list(handles.keys()), loc="center left", bbox_to_anchor=(0.86, 0.5), fontsize=9, title="method")
        what = ("the first 5% of the ranks at twice the load, rank loads on line:P" if w == "non-local-line" else
                "the app's recorded loads replayed on P ranks from the carried split")
        fig.suptitle("%s, %s mode: %s (lbbench -virtual; modelled time: latency %g s, bandwidth %g B/s)"
                     % (w, {"tasks": "task", "chain": "chain", "loads": "rank-load"}[m], what, LATENCY, BANDWIDTH), fontsize=10)
        fig.tight_layout(rect=(0, 0, 0.85, 0.96))
        fig.savefig(os.path.join(out, "%s-%s.png" % (w, m)), dpi=90)
        plt.close(fig)
        print("wrote", os.path.join(out, "%s-%s.png" % (w, m)))


def table(rows, out, P=2048):
    """At P ranks: one row per method, one column per workload and mode."""
    cells, cols, methods = {}, [], []
    for r in rows:
        if r["ranks"] != P:
            continue
        c = (workload_of(r), mode(r))
        if c not in cols:
            cols.append(c)
        if method_of(r) not in methods:
            methods.append(method_of(r))
        cells[(method_of(r), c)] = r
    cols.sort(key=lambda c: (c[0] not in ("point", "box"), c[0] != "point", c[0] == "non-local-line", c[1], c[0]))
    head = ["%s (%s)" % (w, {"tasks": "task", "chain": "chain", "loads": "rank loads"}[m]) for w, m in cols]
    lines = ["# %d ranks: iterations / imbalance after (max/avg - 1) / migration / modelled time (ms) [/ task edges cut]" % P, "",
             "Migration: task mode the tasks moved (MigrationTot), chain mode the cells moved, rank loads the load moved, each "
             "a share of all; modelled time: (rounds + collectives log2 P) x %g s + bytes / P / %g B/s." % (LATENCY, BANDWIDTH), "",
             "| method | " + " | ".join(head) + " |", "| --- |" + " --- |" * len(cols)]
    for m in methods:
        row = []
        for c in cols:
            r = cells.get((m, c))
            if not r:
                row.append("")
                continue
            it, t, mig, imb, _, cut = measures(r)
            row.append("%s / %.3g / %.3g / %s%s" % ("-" if it is None else it, imb, mig, "-" if t is None else "%.3g" % (1e3 * t),
                                                    "" if cut is None else " / %.3g" % cut))
        lines.append("| %s | %s |" % (m, " | ".join(row)))
    start = []
    for c in cols:
        v = [measures(r)[4] for (mm, cc), r in cells.items() if cc == c]
        v = [x for x in v if x is not None and not math.isnan(x)]
        start.append("%.3g" % v[0] if v else "")
    lines += ["", "Imbalance at the start (max/avg - 1; chain mode: the carried split): | " + " | ".join(
        "%s %s" % (h, s_) for h, s_ in zip(head, start) if s_) + " |"]
    beyond = [(m, c, cells[(m, c)]["beyond_own"]) for m in methods for c in cols if "beyond_own" in cells.get((m, c), {})]
    if beyond:
        lines += ["", "Task mode, the share of the total load each method's flows ask ranks to send beyond their own tasks "
                  "(beyond_own: one pass of task selection cannot): " + "; ".join("%s on %s %.3g" % (m, c[0], b) for m, c, b in beyond)]
    bound = [(m, c, cells[(m, c)]["over_optimum"]) for m in methods for c in cols if "over_optimum" in cells.get((m, c), {})]
    if bound:
        lines += ["", "Chain mode, each method's largest part over the exact 1D partition's (over_optimum): " +
                  "; ".join("%s on %s %.6f" % (m, c[0], b) for m, c, b in bound)]
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def scaling(rows, out):
    """Lieber et al.'s Fig. 3: BOX in task mode at every P, one row per
    method: imbalance after / tasks moved (MigrationTot) / the most a rank
    sent and received (MigrationMax) / modelled time (ms) / task edges cut."""
    box = [r for r in rows if workload_of(r) == "box" and mode(r) == "tasks"]
    sizes = sorted({r["ranks"] for r in box})
    if len(sizes) < 2:
        return
    methods = []
    for r in box:
        if method_of(r) not in methods:
            methods.append(method_of(r))
    cells = {(method_of(r), r["ranks"]): r for r in box}
    lines = ["", "# BOX, task mode: imbalance after / MigrationTot / MigrationMax (tasks) / modelled time (ms) / EdgeCutTot", "",
             "| method | " + " | ".join("%d ranks" % P for P in sizes) + " |", "| --- |" + " --- |" * len(sizes)]
    for m in methods:
        row = []
        for P in sizes:
            r = cells.get((m, P))
            if not r:
                row.append("")
                continue
            t = modelled(r) if "rounds" in r else None
            row.append("%.3g / %.3g / %d / %s / %.3g" % (r["imbalance"], r["migration_tot"], r["migration_max"], "-" if t is None else "%.3g" % (1e3 * t),
                                                     r["edgecut_tot"]))
        lines.append("| %s | %s |" % (m, " | ".join(row)))
    with open(os.path.join(out, "table.md"), "a") as f:
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
    scaling(rows, a.out)


if __name__ == "__main__":
    main()
