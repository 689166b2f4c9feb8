#!/usr/bin/env python3
"""Tables and plot of config/poisson-bench.sh.

    python3 postprocess/poisson_bench.py [-o OUTDIR] REPORT.jsonl...

Each report is one run's -report file, named DIMd-qDEGREE-OPERATOR-PC-K.jsonl
(K the repetition), as poisson-bench.sh writes them.  Per case (dimension,
degree, problem) and operator/preconditioner pair the script prints one
line per cycle: cells, DoFs, CG iterations, the wall seconds of the
problem's phases (t_setup, t_assembly, t_ksp: inside the cycle's solve) and
of the cycle's (t_solve, t_estimate, t_adapt, t_partition), the cycle's
total (the sum of the cycle's phases, t_output included), us per active
cell (the total over the cells) and the largest rank's peak resident
memory (rank_peak_rss's max over the ranks) in MB.  Every figure is the median of the
repetitions; the total and us per cell carry their spread, (max - min) /
median.  The last line of a pair, "all", is the run: its us per active
cell is

    1e6 * sum over cycles of the cycle's total / sum over cycles of cells,

its peak the run's; bytes per DoF are all ranks' peak resident memory at
the last cycle over its DoFs.  OUTDIR/poisson-bench.md has the run lines
of every pair side by side, OUTDIR/poisson-bench.csv one row per case,
pair and cycle (median, min and max of every figure), OUTDIR/poisson-bench.json
the same per run with the summary, and OUTDIR/poisson-bench.png us per
active cell against the cycle's cells, one panel per case, the band the
repetitions' range.  OUTDIR/machine.txt (poisson-bench.sh writes it), when
present, heads the .md.
"""
import argparse
import csv
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"^([23])d-q([12])-(assembled|matrix-free)-(amg|mg)-([0-9]+)\.jsonl$")
PHASES = ["t_setup", "t_assembly", "t_ksp", "t_solve", "t_estimate", "t_adapt", "t_partition"]
CYCLE_PHASES = ["t_solve", "t_estimate", "t_adapt", "t_partition", "t_output"]
FIELDS = ["cells", "dofs", "ksp_its"] + PHASES + ["total", "us_per_cell", "rss_max", "rss_sum"]
PAIRS = ["assembled:amg", "assembled:mg", "matrix-free:amg", "matrix-free:mg"]


def fail(msg):
    sys.exit(f"poisson_bench.py: error: {msg}")


def load(path):
    """One run: its key from the file name and its records."""
    m = NAME.match(os.path.basename(path))
    if not m:
        fail(f"{path}: not a poisson-bench.sh report (DIMd-qDEGREE-OPERATOR-PC-K.jsonl)")
    recs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                fail(f"{path}:{n}: {e}")
            for key in ["cells", "dofs", "ksp_its", "rank_peak_rss"] + CYCLE_PHASES + PHASES:
                if key not in r:
                    fail(f"{path}:{n}: no field {key} (a Poisson report of this version?)")
            recs.append(r)
    if not recs:
        fail(f"{path}: no records")
    dim, deg, op, pc, k = m.groups()
    if recs[0]["dim"] != int(dim) or recs[0]["degree"] != int(deg):
        fail(f"{path}: the records are {recs[0]['dim']}D Q{recs[0]['degree']}, the name says {dim}D Q{deg}")
    case = (int(dim), int(deg), recs[0]["problem"], recs[0]["mesh"], recs[0]["ranks"])
    return case, f"{op}:{pc}", int(k), recs


def cycle_figures(r):
    total = sum(r[p] for p in CYCLE_PHASES)
    f = {key: r[key] for key in ["cells", "dofs", "ksp_its"] + PHASES}
    f.update(total=total, us_per_cell=1e6 * total / r["cells"],
             rss_max=r["rank_peak_rss"]["max"], rss_sum=r["rank_peak_rss"]["mean"] * r["ranks"])
    return f


def run_figures(recs):
    """The run's line: sums over the cycles, the peak of the last cycle."""
    cyc = [cycle_figures(r) for r in recs]
    f = {key: sum(c[key] for c in cyc) for key in ["cells"] + PHASES + ["total"]}
    f.update(dofs=cyc[-1]["dofs"], ksp_its=max(c["ksp_its"] for c in cyc),
             us_per_cell=1e6 * f["total"] / f["cells"], rss_max=cyc[-1]["rss_max"], rss_sum=cyc[-1]["rss_sum"])
    f["bytes_per_dof"] = f["rss_sum"] / cyc[-1]["dofs"]
    return cyc, f


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def spread(s):
    return (s["max"] - s["min"]) / s["median"] if s["median"] else 0.0


def aggregate(runs):
    """Median, min and max over the repetitions, per cycle and for the run."""
    ncyc = min(len(c) for c, _ in runs)
    if any(len(c) != ncyc for c, _ in runs):
        print(f"poisson_bench.py: warning: the repetitions ran {sorted({len(c) for c, _ in runs})} cycles; "
              f"the first {ncyc} are compared", file=sys.stderr)
    cycles = []
    for i in range(ncyc):
        cycles.append({key: stats([c[i][key] for c, _ in runs]) for key in FIELDS})
        for key in ["cells", "dofs"]:
            if cycles[-1][key]["min"] != cycles[-1][key]["max"]:
                print(f"poisson_bench.py: warning: cycle {i}: {key} differ between repetitions", file=sys.stderr)
    run = {key: stats([f[key] for _, f in runs]) for key in FIELDS + ["bytes_per_dof"]}
    return cycles, run


def case_title(case):
    dim, deg, problem, mesh, ranks = case
    return f"{dim}D Q{deg} {problem} on {os.path.basename(mesh)}, {ranks} ranks"


HEAD = (f"{'cycle':>5} {'cells':>9} {'dofs':>9} {'its':>4} {'setup':>7} {'assembly':>8} {'ksp':>7} "
        f"{'solve':>7} {'estimate':>8} {'adapt':>7} {'partition':>9} {'total':>8} {'spread':>6} "
        f"{'us/cell':>8} {'spread':>6} {'peak MB/rank':>12}")


def line(label, s):
    m = {key: s[key]["median"] for key in FIELDS}
    return (f"{label:>5} {m['cells']:9.0f} {m['dofs']:9.0f} {m['ksp_its']:4.0f} {m['t_setup']:7.3f} {m['t_assembly']:8.3f} "
            f"{m['t_ksp']:7.3f} {m['t_solve']:7.3f} {m['t_estimate']:8.3f} {m['t_adapt']:7.3f} {m['t_partition']:9.3f} "
            f"{m['total']:8.3f} {100 * spread(s['total']):5.0f}% {m['us_per_cell']:8.1f} {100 * spread(s['us_per_cell']):5.0f}% "
            f"{m['rss_max'] / 1e6:12.1f}")


def write_csv(path, table):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dim", "degree", "problem", "mesh", "ranks", "pair", "runs", "cycle"]
                   + [f"{key}_{s}" for key in FIELDS for s in ["median", "min", "max"]])
        for (case, pair), (n, cycles, run) in table.items():
            for i, c in enumerate(cycles + [run]):
                w.writerow(list(case) + [pair, n, i if i < len(cycles) else "all"]
                           + [c[key][s] for key in FIELDS for s in ["median", "min", "max"]])


def write_md(path, table, machine):
    with open(path, "w") as f:
        f.write("# Poisson benchmark\n\n")
        for m in machine:
            f.write(f"{m}  \n")
        f.write("\nPer run: us per active cell = 1e6 * sum over cycles of the cycle's wall time (solve, estimate, "
                "adapt, partition, output; maximum over ranks) / sum over cycles of active cells; "
                "median [min, max] of the repetitions.  Bytes per DoF: all ranks' peak resident memory "
                "over the last cycle's DoFs.  Times of the run (sums over cycles, medians) in seconds.\n\n")
        f.write("| case | pair | runs | cycles | last cells | last DoFs | CG its (max) | us/active cell | "
                "setup | assembly | ksp | solve | estimate | adapt | partition | peak MB/rank | bytes/DoF |\n")
        f.write("|" + " --- |" * 17 + "\n")
        for (case, pair), (n, cycles, run) in table.items():
            u = run["us_per_cell"]
            med = {key: run[key]["median"] for key in run}
            f.write(f"| {case_title(case)} | {pair.replace(':', ' + ')} | {n} | {len(cycles)} | "
                    f"{cycles[-1]['cells']['median']:.0f} | {med['dofs']:.0f} | {med['ksp_its']:.0f} | "
                    f"{u['median']:.1f} [{u['min']:.1f}, {u['max']:.1f}] | "
                    + " | ".join(f"{med[p]:.2f}" for p in PHASES)
                    + f" | {med['rss_max'] / 1e6:.0f} | {med['bytes_per_dof']:.0f} |\n")


def write_json(path, table, machine):
    out = {"machine": machine, "runs": []}
    for (case, pair), (n, cycles, run) in table.items():
        dim, deg, problem, mesh, ranks = case
        op, pc = pair.split(":")
        out["runs"].append({"dim": dim, "degree": deg, "problem": problem, "mesh": mesh, "ranks": ranks,
                            "operator": op, "pc": pc, "repetitions": n, "cycles": cycles, "run": run})
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


def plot(path, table):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    cases = sorted({case for case, _ in table})
    fig, axes = plt.subplots(1, len(cases), figsize=(4.5 * len(cases), 4), squeeze=False)
    styles = dict(zip(PAIRS, [("C0", "-"), ("C1", "--"), ("C2", "-."), ("C3", ":")]))
    for ax, case in zip(axes[0], cases):
        for pair in PAIRS:
            if (case, pair) not in table:
                continue
            _, cycles, run = table[(case, pair)]
            x = [c["cells"]["median"] for c in cycles]
            colour, style = styles[pair]
            ax.plot(x, [c["us_per_cell"]["median"] for c in cycles], color=colour, linestyle=style, marker="o",
                    label=f"{pair.replace(':', ' + ')}: {run['us_per_cell']['median']:.0f} us/cell")
            ax.fill_between(x, [c["us_per_cell"]["min"] for c in cycles], [c["us_per_cell"]["max"] for c in cycles],
                            color=colour, alpha=0.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        # a log axis over less than a decade gets one major tick or none:
        # tick the cycles' cells themselves, plain numbers, no minor labels
        xs = sorted({c["cells"]["median"] for (cs, pr), (_, cycles, _) in table.items() if cs == case for c in cycles})
        if len(xs) > 8:
            xs = xs[::(len(xs) + 7) // 8]
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(xs))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:.0f}"))
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        if len(xs) == 1:
            ax.set_xlim(xs[0] / 1.5, xs[0] * 1.5)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
        ax.tick_params(axis="y", which="both", labelsize=8)
        ax.set_xlabel("active cells of the cycle")
        ax.set_ylabel("wall us per active cell")
        ax.set_title(case_title(case), fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(prog="poisson_bench.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--outdir", default=".", help="folder of the .md, .csv, .json and .png (default: .)")
    ap.add_argument("--no-plot", action="store_true", help="skip the .png")
    ap.add_argument("reports", nargs="+", help="DIMd-qDEGREE-OPERATOR-PC-K.jsonl reports")
    a = ap.parse_args()
    groups = {}
    for path in a.reports:
        case, pair, k, recs = load(path)
        groups.setdefault((case, pair), []).append(run_figures(recs))
    order = sorted(groups, key=lambda cp: (cp[0], PAIRS.index(cp[1])))
    table = {cp: (len(groups[cp]),) + aggregate(groups[cp]) for cp in order}
    machine_path = os.path.join(a.outdir, "machine.txt")
    machine = open(machine_path).read().splitlines() if os.path.exists(machine_path) else []
    for (case, pair), (n, cycles, run) in table.items():
        print(f"\n== {case_title(case)}: {pair.replace(':', ' + ')}, median of {n} run{'s' if n > 1 else ''}")
        print(HEAD)
        for i, c in enumerate(cycles):
            print(line(str(i), c))
        print(line("all", run) + f"  ({run['bytes_per_dof']['median']:.0f} bytes/DoF)")
    os.makedirs(a.outdir, exist_ok=True)
    write_csv(os.path.join(a.outdir, "poisson-bench.csv"), table)
    write_md(os.path.join(a.outdir, "poisson-bench.md"), table, machine)
    write_json(os.path.join(a.outdir, "poisson-bench.json"), table, machine)
    if not a.no_plot:
        plot(os.path.join(a.outdir, "poisson-bench.png"), table)
    print(f"\nwrote {a.outdir}/poisson-bench.md, .csv, .json" + ("" if a.no_plot else ", .png"))


if __name__ == "__main__":
    main()
