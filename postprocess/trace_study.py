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
MigrationTot and EdgeCutTot.
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


def plots(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = {}
    for r in rows:
        if r["scenario"].startswith("trace:"):
            groups.setdefault((workload(r), mode(r)), []).append(r)
    names = ("iterations", "migration (share moved)", "imbalance (max/avg - 1)", "run time (s)")
    for (w, m), rs in sorted(groups.items()):
        fig, axes = plt.subplots(2, 2, figsize=(11, 8))
        for method in sorted({r["method"] for r in rs}):
            pts = sorted((r["ranks"], measures(r)) for r in rs if r["method"] == method)
            for k, ax in enumerate(axes.flat):
                xy = [(p, v[k]) for p, v in pts if v[k] is not None and v[k] > 0]
                if xy:
                    ax.plot(*zip(*xy), marker="o", label=method)
        for k, ax in enumerate(axes.flat):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("ranks P")
            ax.set_title(names[k])
        axes.flat[0].legend(fontsize=7)
        fig.suptitle("%s, %s mode" % (w, m))
        fig.tight_layout()
        fig.savefig(os.path.join(out, "%s-%s.png" % (w, m)))
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
            row.append("%s / %.4f / %.3f / %.4f" % ("-" if it is None else it, r["imbalance"], r["migration_tot"], r["edgecut_tot"]))
        lines.append("| %s | %s |" % (m, " | ".join(row)))
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
