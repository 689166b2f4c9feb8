#!/usr/bin/env python3
"""Checks the report (JSON Lines) of a darcy-transport or reactive-transport
run against what the locally conservative Darcy flux promises,
in every cycle:

  flux_divergence_max <= 1e-12   the transport's face fluxes sum to zero
                                 over every cell (relative to the largest)
  tracer_min, tracer_max         the tracer's cell means within [0, 1] to 1e-12
  mass_balance_error <= 1e-12
  ksp_its >= 1, t_ksp >= 0       the pressure solve's iterations and time

Usage: check_darcy.py FILE.jsonl [--species B0] [--same OTHER.jsonl]
  --species B0   reactive-transport: B's and C's cell means within [0, B0]
                 to 1e-12 as well
  --same OTHER   OTHER (the run on other ranks) has the same cells in every
                 cycle, the same steps, and the same mass to 1e-10
Exits 1 with one line naming the file, the cycle and the failed check."""
import argparse
import json
import sys

TOL = 1e-12


def fail(fmt, *args):
    sys.exit("check_darcy.py: " + fmt % args)


def load(path):
    try:
        records = [json.loads(line) for line in open(path) if line.strip()]
    except (OSError, ValueError) as e:
        fail("%s: %s", path, e)
    if not records:
        fail("%s: no records", path)
    return records


def main():
    p = argparse.ArgumentParser()
    p.add_argument("report")
    p.add_argument("--species", type=float)
    p.add_argument("--same")
    a = p.parse_args()
    records = load(a.report)
    ranges = [("tracer_min", "tracer_max", 1.0)]
    if a.species is not None:
        ranges += [("b_min", "b_max", a.species), ("c_min", "c_max", a.species)]
    for r in records:
        c = r.get("cycle")
        for key in ["flux_divergence_max", "tracer_min_qp", "tracer_max_qp", "ksp_its", "t_ksp", "t_poisson"] + [k for lo, hi, _ in ranges for k in (lo, hi)]:
            if key not in r:
                fail("%s: cycle %s: no field %s", a.report, c, key)
        if not r["flux_divergence_max"] <= TOL:
            fail("%s: cycle %s: flux_divergence_max %.3g > %g", a.report, c, r["flux_divergence_max"], TOL)
        for lo, hi, top in ranges:
            if not (r[lo] >= -TOL and r[hi] <= top + TOL):
                fail("%s: cycle %s: %s %.17g, %s %.17g: not within [0, %g] to %g", a.report, c, lo, r[lo], hi, r[hi], top, TOL)
        if not r["mass_balance_error"] <= TOL:
            fail("%s: cycle %s: mass_balance_error %.3g", a.report, c, r["mass_balance_error"])
        if not (r["ksp_its"] >= 1 and r["t_ksp"] >= 0 and r["t_poisson"] >= 0):
            fail("%s: cycle %s: pressure solve ksp_its %s t_ksp %s", a.report, c, r["ksp_its"], r["t_ksp"])
    summary = "%d cycles, flux_divergence_max <= %.2e, tracer in [%.17g, %.17g]" % (
        len(records), max(r["flux_divergence_max"] for r in records), min(r["tracer_min"] for r in records),
        max(r["tracer_max"] for r in records))
    if a.same:
        other = load(a.same)
        if len(other) != len(records):
            fail("%s: %d cycles, %s: %d", a.report, len(records), a.same, len(other))
        for r, o in zip(records, other):
            if (r["cells"], r["step"]) != (o["cells"], o["step"]):
                fail("cycle %s: %d cells, step %d in %s; %d cells, step %d in %s", r["cycle"], r["cells"], r["step"], a.report,
                     o["cells"], o["step"], a.same)
            if abs(r["mass"] - o["mass"]) > 1e-10 * abs(o["mass"]):
                fail("cycle %s: mass %.17g in %s, %.17g in %s", r["cycle"], r["mass"], a.report, o["mass"], a.same)
        summary += ", same cells, steps and mass as %s" % a.same
    print("%s: %s" % (a.report, summary))


if __name__ == "__main__":
    main()
