#!/usr/bin/env python3
"""Checks amr2d/amr3d reports of reactive-transport.

check_reactive.py conservation REPORT TOL
    every cycle keeps A + C (against its initial mass and the boundary
    inflow, mass_balance_error) and B + C (mass_bc_error) to TOL relative;
    the reaction states add up to the cells; the run reacted, adapted the
    mesh and moved cells between ranks, so that both invariants went
    through adapt, repartition and steps.
check_reactive.py same A B
    two runs of one setup on different rank counts: the same meshes (cells
    per cycle and per reaction state), the same reaction steps, and the
    species' integrals to 1e-9 of the initial B (the pressure solve is
    iterative, its preconditioner depends on the rank count).
check_reactive.py weights REPORT MODE MIN_RATIO
    a run with -lb_weights MODE: weights, weights_stderr and
    weights_measured in every record with one value per load type (quiet,
    reacting), rank_reaction_step_ns with one value per rank in the side
    file (positive, or NaN on a rank without front cells; in some cycle on
    every rank),
    weights finite, non-negative, not all 0, and that fit the mode
    (count: all 1; measured: the measured means; timing: fitted at least
    once), and the measured cost of a reacting cell at least MIN_RATIO
    times a quiet one's (median over the cycles after the first).
check_reactive.py fit REPORT TOL
    a run with -lb_weights timing: the fitted cost of a reacting cell
    within TOL (relative) of its measured mean cost, the median over the
    cycles after the third (both scaled to mean cell weight 1, so the
    ratio does not depend on the machine's speed).
check_reactive.py offload HOME AWAY
    one setup without the offload (HOME, -react_offload 0) and with it
    (AWAY) on the same partitions (count weights): every field the
    physics makes (cells per rank, from the side file, and per state, integrator steps, the
    species' integrals and ranges, tracer and mass fields) the same bit
    for bit; AWAY's offload fields one value per step of each cycle
    (step minus the last cycle's step), its planned largest reaction load
    never above the one before the plan, the mean at most the largest,
    and on more than one rank some cell integrated away from home.
Exit status 0 when the check holds.
"""
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "postprocess"))
import report_ranks  # noqa: E402


def load(path):
    recs = report_ranks.records(path)
    assert recs, "%s: no records" % path
    return recs


def conservation(path, tol):
    recs = load(path)
    for r in recs:
        c = r["cycle"]
        assert r["mass_balance_error"] <= tol, "cycle %d: A+C error %g" % (c, r["mass_balance_error"])
        assert r["mass_bc_error"] <= tol, "cycle %d: B+C error %g" % (c, r["mass_bc_error"])
        assert r["cells_inert"] + r["cells_reacting"] + r["cells_reacted"] == r["cells"], "cycle %d: states" % c
        assert r["reaction_steps"] > 0 and r["mass_c"] > 0, "cycle %d: nothing reacted" % c
    assert len({r["cells"] for r in recs}) > 1, "the mesh never changed"
    assert any(r["migrated_cells_tot"] > 0 for r in recs), "no cell moved between ranks"
    print("%s: %d cycles, worst A+C error %.2e, worst B+C error %.2e" % (
        path, len(recs), max(r["mass_balance_error"] for r in recs), max(r["mass_bc_error"] for r in recs)))


def same(a, b):
    ra, rb = load(a), load(b)
    assert len(ra) == len(rb), "%d and %d cycles" % (len(ra), len(rb))
    worst = 0.0
    for x, y in zip(ra, rb):
        for k in ("cells", "cells_inert", "cells_reacting", "cells_reacted", "step", "reaction_steps"):
            assert x[k] == y[k], "cycle %d: %s %s against %s" % (x["cycle"], k, x[k], y[k])
        for k in ("mass_a", "mass_b", "mass_c"):
            worst = max(worst, abs(x[k] - y[k]) / x["mass_b_initial"])
    assert worst <= 1e-9, "species integrals differ by %g of the initial B" % worst
    print("%s and %s: %d cycles, same meshes and steps, integrals within %.1e" % (a, b, len(ra), worst))


def weights(path, mode, min_ratio):
    recs = load(path)
    ratios = []
    fitted = False
    speeds = 0
    for r in recs:
        c = r["cycle"]
        assert r["lb_weights"] == mode, "cycle %d: lb_weights %s" % (c, r["lb_weights"])
        for k in ("weights", "weights_stderr", "weights_measured"):
            assert len(r[k]) == 2, "cycle %d: %s has %d values" % (c, k, len(r[k]))
        ns = report_ranks.values(r, "rank_reaction_step_ns")
        # NaN on a rank without a front cell in the cycle
        assert len(ns) == r["ranks"] and all(math.isnan(x) or x > 0 for x in ns), "cycle %d: rank_reaction_step_ns %s" % (c, ns)
        speeds += not any(math.isnan(x) for x in ns)
        w, m = r["weights"], r["weights_measured"]
        # the non-negative fit may set a cost below its noise to 0 (fit_flags
        # clamped-at-zero): timing does for quiet cells, which cost about 1%
        # of a reacting one
        assert all(x is not None and x >= 0 and math.isfinite(x) for x in w) and max(w) > 0, "cycle %d: weights %s" % (c, w)
        if mode == "count":
            assert w == [1, 1], "cycle %d: count weights %s" % (c, w)
        if mode == "measured":
            assert all(x is None or abs(x - y) <= 1e-12 * y for x, y in zip(m, w)), "cycle %d: %s against %s" % (c, w, m)
        fitted = fitted or r["weights_fitted"]
        if c >= 1 and m[0] and m[1]:
            ratios.append(m[1] / m[0])
    assert mode != "timing" or fitted, "the fit never succeeded"
    assert speeds, "no cycle timed a front step on every rank"
    assert ratios, "no cycle measured both reacting and quiet cells"
    med = statistics.median(ratios)
    assert med >= min_ratio, "median measured cost ratio reacting/quiet %.2f < %g" % (med, min_ratio)
    print("%s: %d cycles, -lb_weights %s, median measured cost ratio reacting/quiet %.1f (of %d cycles)" % (
        path, len(recs), mode, med, len(ratios)))


def fit(path, tol):
    recs = load(path)
    ratios = []
    for r in recs:
        assert r["lb_weights"] == "timing", "cycle %d: lb_weights %s" % (r["cycle"], r["lb_weights"])
        w, m = r["weights"], r["weights_measured"]
        if r["cycle"] >= 3 and m[1]:
            ratios.append(w[1] / m[1])
    assert ratios, "no cycle after the third measured a reacting cell"
    med = statistics.median(ratios)
    assert abs(med - 1) <= tol, "median fitted/measured cost of a reacting cell %.2f, not within %g of 1" % (med, tol)
    print("%s: median fitted/measured cost of a reacting cell %.2f (of %d cycles, range %.2f-%.2f)" % (
        path, med, len(ratios), min(ratios), max(ratios)))


PHYSICS = ("cells", "cells_inert", "cells_reacting", "cells_reacted", "step", "sim_time", "reaction_steps", "rank_cells",
           "mass_a", "mass_b", "mass_c", "mass", "b_min", "b_max", "c_min", "c_max", "tracer_min", "tracer_max",
           "tracer_min_qp", "tracer_max_qp", "mass_balance_error", "mass_bc_error", "boundary_inflow", "dofs")
OFFLOAD = ("reaction_planned_max_before_s", "reaction_planned_max_after_s", "reaction_planned_mean_s", "offload_moved",
           "offload_messages", "offload_plan_messages", "offload_plan_s", "offload_bytes")


def offload(home, away):
    ra, rb = load(home), load(away)
    assert len(ra) == len(rb), "%d and %d cycles" % (len(ra), len(rb))
    moved, step = 0, 0
    for x, y in zip(ra, rb):
        c = x["cycle"]
        assert x["offload"] is False and y["offload"] is True, "cycle %d: offload %s and %s" % (c, x["offload"], y["offload"])
        for k in PHYSICS:
            assert x[k] == y[k], "cycle %d: %s %s at home, %s with the offload" % (c, k, x[k], y[k])
        cells = [report_ranks.values(r, "rank_cells") for r in (x, y)]
        assert cells[0] == cells[1], "cycle %d: cells per rank %s at home, %s with the offload" % (c, *cells)
        n = y["step"] - step
        step = y["step"]
        for k in OFFLOAD:
            assert len(y[k]) == n, "cycle %d: %s has %d values for %d steps" % (c, k, len(y[k]), n)
        for b, a, m in zip(y["reaction_planned_max_before_s"], y["reaction_planned_max_after_s"], y["reaction_planned_mean_s"]):
            assert m <= a + 1e-12 and a <= b + 1e-12, "cycle %d: planned mean %g, max %g after, %g before" % (c, m, a, b)
        moved += sum(y["offload_moved"])
    assert ra[0]["ranks"] == 1 or moved > 0, "no cell integrated away from home on %d ranks" % ra[0]["ranks"]
    assert ra[0]["ranks"] > 1 or moved == 0, "a cell moved on one rank"
    print("%s and %s: %d cycles the same bit for bit, %d cells integrated away from home" % (home, away, len(ra), moved))


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "conservation":
        conservation(sys.argv[2], float(sys.argv[3]))
    elif what == "same":
        same(sys.argv[2], sys.argv[3])
    elif what == "weights":
        weights(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif what == "offload":
        offload(sys.argv[2], sys.argv[3])
    elif what == "fit":
        fit(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit("unknown check %s" % what)
