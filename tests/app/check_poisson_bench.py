#!/usr/bin/env python3
"""Checks config/poisson-bench.sh's output folder (test poisson_bench_check).

    check_poisson_bench.py OUTDIR RUNS CYCLES2D CYCLES3D DOFS0_2D DOFS0_3D

OUTDIR/poisson-bench.json must hold RUNS operator/preconditioner pairs;
within a case every pair runs the same cycles (CYCLES2D or CYCLES3D) on the
same cells and DoFs, the first cycle's DoFs are DOFS0 (the starting mesh's
count), CG takes 1 to 30 iterations, a run's us per active cell lies
between its cycles' (it is their cell-weighted mean), each rank's peak
memory is between 10 MB and 4 GiB and never falls, and the .csv has a row
per cycle and one per run.
"""
import csv
import json
import os
import sys


def check(ok, msg):
    if not ok:
        sys.exit(f"poisson bench check failed: {msg}")


def main():
    out, nruns, c2, c3, d2, d3 = sys.argv[1], *map(int, sys.argv[2:7])
    with open(os.path.join(out, "poisson-bench.json")) as f:
        data = json.load(f)
    runs = data["runs"]
    check(len(runs) == nruns, f"{len(runs)} runs, expected {nruns}")
    check(any(m.startswith("load average") for m in data["machine"]), "no load average in machine.txt")
    cases = {}
    for r in runs:
        name = f"{r['dim']}D Q{r['degree']} {r['operator']} + {r['pc']}"
        cyc = r["cycles"]
        check(len(cyc) == (c2 if r["dim"] == 2 else c3), f"{name}: {len(cyc)} cycles")
        check(cyc[0]["dofs"]["median"] == (d2 if r["dim"] == 2 else d3), f"{name}: cycle 0 has {cyc[0]['dofs']['median']} DoFs")
        mesh = [(c["cells"]["median"], c["dofs"]["median"]) for c in cyc]
        ref = cases.setdefault((r["dim"], r["degree"]), (name, mesh))
        check(mesh == ref[1], f"{name}: cells and DoFs {mesh} differ from {ref[0]}'s {ref[1]}")
        for i, c in enumerate(cyc):
            check(1 <= c["ksp_its"]["max"] <= 30, f"{name} cycle {i}: {c['ksp_its']['max']} CG iterations")
            check(c["total"]["min"] > 0, f"{name} cycle {i}: total time {c['total']['min']}")
            check(10e6 <= c["rss_max"]["median"] <= 4 * 2**30, f"{name} cycle {i}: peak {c['rss_max']['median']} bytes per rank")
            if i:
                check(c["rss_max"]["min"] >= cyc[i - 1]["rss_max"]["min"], f"{name} cycle {i}: the peak memory fell")
        us = [c["us_per_cell"]["median"] for c in cyc]
        run_us = r["run"]["us_per_cell"]["median"]
        check(min(us) * (1 - 1e-12) <= run_us <= max(us) * (1 + 1e-12), f"{name}: run {run_us} us/cell outside its cycles' {us}")
        check(r["run"]["bytes_per_dof"]["median"] > 0, f"{name}: bytes per DoF")
    with open(os.path.join(out, "poisson-bench.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == sum(len(r["cycles"]) + 1 for r in runs), f"{len(rows)} csv rows")
    print(f"poisson bench check passed: {len(runs)} runs, {len(cases)} cases")


if __name__ == "__main__":
    main()
