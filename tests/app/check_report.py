#!/usr/bin/env python3
"""Check amr2d reports of the cycle with the built-in balancer.

check_report.py fields REPORT
    every record has the report fields of src/app/FORMATS.md (Output), and they agree with
    each other and with the record's block of the per-rank side file:
    every per-rank field's min/mean/max/argmax are those of its values in
    the block (one per rank), t_rank_max/avg and weighed_imbalance_pct
    recomputed from rank_time, rank_load_measured and fit_smape from
    each rank's rank_time and rank_load_predicted, the phase model's
    cycle_time_s, cycle_mean_s and each phase's miss_pct (the last cycle's
    next_own_cpu against this one's own_cpu, summed over the run) from the
    phases' rows, rank_cells of a cycle sum to the next
    cycle's cells, the run totals accumulate the per-cycle numbers; with a
    linear solve (t_ksp) each rank's KSP time rank_ksp_time within t_ksp,
    its thread CPU time rank_ksp_cpu within it.
check_report.py size MAX_RATIO REPORT REPORT
    the record's size does not grow with the ranks: the two reports (the
    same run on different rank counts) hold lists of the same lengths under
    the same keys in the records of each cycle (a per-rank array would be
    as long as the ranks), and their mean record sizes are within
    MAX_RATIO of each other.
check_report.py decide MAX_MEAN_PCT REPORT [MAX_MEAN_PCT REPORT ...]
    -lb_threshold's ski-rental rule: in every record the loss since the
    last rebalance is recomputed from the phase model's own work (the sum
    over the phases but the partition of max - mean, N times, per cycle
    beyond the residual, the least loss of a cycle since the last
    rebalance; 0 before the first), the cost is predicted_migration_s N,
    and lb_decision follows from them (rebalance
    exactly when above the floor and the loss reached the cost, gain when
    short of it but the coming cycle's predicted gain exceeds it); over each
    run the mean measured I% is below MAX_MEAN_PCT and at most half and at
    least a twentieth of the cycles rebalanced, one in the second half, at
    most half by measured loss
    (with no -lb_threshold every cycle but the last does; a rule that stops
    rebalancing falls short).
check_report.py timing TIMING_REPORT COUNT_REPORT [CYCLE]
    Niemoeller et al. 2020 against real time: from a skewed start, after CYCLE (default
    3) rebalanced cycles, the measured imbalance of the local work with
    timing weights (median over cycle CYCLE to the last) is at most half of
    count weights' over the same cycles.
check_report.py shift SFC_REPORT SHIFT_REPORT [FLOOR [FRACTION [SETTLE]]]
    Niemoeller et al. 2020's offset shifting against real time, with cell costs that are
    wrong: over the later cycles (the last two thirds) sfc's median measured
    I% stays at least FLOOR (default 40), sfc-shift's is at most FRACTION
    (default 1/2) of sfc's, and sfc-shift's falls: the median of its last
    third of cycles is at most SETTLE (default 3/4) of the median of cycles
    1-3 (the cycle on the sfc split and the first two shifted ones).
check_report.py schema REPORT [REPORT ...]
    one schema for every problem: every record of every report begins with
    the same common fields in the same order, then the balancer's fields,
    then the problem's own; sim_time and step are null exactly for the
    problems without time.
check_report.py bound TOL REPORT [REPORT ...]
    every record's largest part against the exact 1D partition's:
    part_load_max and part_load_optimum present and positive, the largest
    part at least the optimum (to rounding), part_load_over_optimum their
    ratio, and in the cycles that rebalanced at most 1 + TOL (the families
    kept together move the method's cuts by a few cells).
Exit status 0 when the check holds.
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "postprocess"))
import report_ranks  # noqa: E402
from check_phases import check_miss  # noqa: E402

FIELDS = ("cycle sim_time cells dofs ksp_its error t_rank_max t_rank_avg weighed_imbalance_pct max_over_avg "
          "weighed_predicted_imbalance_pct weights fit_smape lb_method lb_iterations lb_rounds lb_time_s "
          "migrated_cells_tot migrated_cells_max edge_cut comm_edges comm_edges_added comm_edges_removed "
          "rank_cells rank_predicted rank_time predicted_gain_s predicted_migration_s rebalanced "
          "total_s lost_rank_s lb_total_s migrate_total_s excess_loss_rank_s residual_loss_rank_s balance_cost_rank_s lb_decision").split()


def load(path):
    return report_ranks.records(path)


def close(a, b, rel=1e-6, abs_=1e-12):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + abs_


def check_fields(recs):
    bad = []
    lost = lbt = mig = 0.0
    for i, r in enumerate(recs):
        missing = [k for k in FIELDS if k not in r]
        if missing:
            bad.append("cycle %d: missing %s" % (i, ", ".join(missing)))
            continue
        n = r["ranks"]
        bad += check_reductions(i, r)
        t = r["per_rank"].get("rank_time", [])
        if len(t) != n or len(r["per_rank"]["rank_cells"]) != n or len(r["per_rank"]["rank_predicted"]) != n:
            bad.append("cycle %d: the side file's per-rank arrays are not of length %d" % (i, n))
            continue
        t = [float(x) for x in t]
        tmax, tavg = max(t), sum(t) / n
        ipct = 100 * (tmax - tavg) * n / (tmax * (n - 1)) if n > 1 and tmax > 0 else 0.0
        if not (close(tmax, r["t_rank_max"]) and close(tavg, r["t_rank_avg"]) and close(ipct, r["weighed_imbalance_pct"], 1e-5, 1e-6)):
            bad.append("cycle %d: t_rank_max/avg or weighed_imbalance_pct disagree with rank_time" % i)
        cells = int(sum(r["per_rank"]["rank_cells"]))
        if i + 1 < len(recs) and cells != recs[i + 1]["cells"]:
            bad.append("cycle %d: rank_cells sum %d, next cycle has %d cells" % (i, cells, recs[i + 1]["cells"]))
        if not close(float(sum(r["per_rank"]["rank_predicted"])), n, 1e-6):
            bad.append("cycle %d: rank_predicted does not average 1" % i)
        lost += (tmax - tavg) * n
        lbt += r["lb_time_s"]
        mig += r["migrate_time_s"]
        if not (close(lost, r["lost_rank_s"], 1e-5, 1e-9) and close(lbt, r["lb_total_s"], 1e-5, 1e-9) and close(mig, r["migrate_total_s"], 1e-5, 1e-9)):
            bad.append("cycle %d: run totals do not accumulate the cycles" % i)
        if r["migrated_cells_tot"] and not r["rebalanced"]:
            bad.append("cycle %d: cells migrated without a rebalance" % i)
        if n <= 2 and r["comm_edges"] > n - 1:
            bad.append("cycle %d: %d communicating pairs on %d ranks" % (i, r["comm_edges"], n))
        bad += check_ksp(i, r)
        bad += check_rank_loads(i, r, t)
    return bad + check_phase_rows(recs)


def check_rank_loads(i, r, t):
    """Each rank's measured and predicted load, and the sMAPE of the two:
    every rank's own values, the record's sMAPE over the ranks."""
    rows = r["per_rank"]
    n, tsum = r["ranks"], sum(t)
    m = [x * n / tsum if tsum > 0 else 1.0 for x in t]
    p = [float(x) for x in rows["rank_load_predicted"]]
    smape = 100 * sum(abs(a - b) / ((a + b) / 2) for a, b in zip(p, m) if a + b > 0) / n
    if not all(close(a, float(b), 1e-12, 1e-300) for a, b in zip(m, rows["rank_load_measured"])):
        return ["cycle %d: rank_load_measured %s is not rank_time over its mean %s" % (i, list(rows["rank_load_measured"]), m)]
    if not (close(sum(p), n, 1e-9) and close(smape, r["fit_smape"], 1e-9, 1e-12)):
        return ["cycle %d: rank_load_predicted %s (mean 1) and rank_load_measured give fit_smape %r, the record %r" % (i, p, smape, r["fit_smape"])]
    return []


def check_phase_rows(recs):
    """The phase model's numbers from the phases' rows of the side file:
    the cycle's time and mean (the sums over the phases of the largest and
    of the mean own CPU), and each phase's miss_pct (check_phases.py's
    check_miss)."""
    bad = []
    for i, r in enumerate(recs):
        rows, phases = r["per_rank"], r.get("phases") or {}
        time = mean = 0.0
        for name in phases:
            own = [float(x) for x in rows["phases.%s.own_cpu" % name]]
            time += max(0.0, max(own))
            mean += sum(own) / len(own)
        if phases and not (close(time, r["cycle_time_s"], 1e-12, 1e-300) and close(mean, r["cycle_mean_s"], 1e-12, 1e-300)):
            bad.append("cycle %d: cycle_time_s %r, cycle_mean_s %r, the phases' rows give %r, %r" % (i, r["cycle_time_s"], r["cycle_mean_s"], time, mean))
    return bad + check_miss(recs)


def reductions(rec, path=""):
    """Every per-rank field of rec (a {min, mean, max, argmax} object, at any
    depth) by its side-file name."""
    for k, v in rec.items():
        if isinstance(v, dict) and set(v) == {"min", "mean", "max", "argmax"}:
            yield path + k, v
        elif isinstance(v, dict) and k != "per_rank":
            yield from reductions(v, path + k + ".")


def check_reductions(i, r):
    """The record's reductions are those of the side file's values, and
    the block holds exactly the record's per-rank fields."""
    bad = []
    red = dict(reductions(r))
    if set(red) != set(r["per_rank"]):
        return ["cycle %d: the record's per-rank fields %s, the side file's %s" % (i, sorted(red), sorted(r["per_rank"]))]
    for name, v in red.items():
        a = [float(x) for x in r["per_rank"][name] if not math.isnan(x)]
        if not a:
            if v["max"] is not None:
                bad.append("cycle %d: %s has no value in the side file, the record %s" % (i, name, v))
            continue
        top = max(a)
        if not (v["min"] == min(a) and v["max"] == top and close(v["mean"], sum(a) / len(a), 1e-12, 1e-300)
                and float(r["per_rank"][name][v["argmax"]]) == top
                and all(float(x) < top for x in r["per_rank"][name][:v["argmax"]] if not math.isnan(x))):
            bad.append("cycle %d: %s %s, the side file's values %s" % (i, name, v, list(r["per_rank"][name])))
    return bad


def check_size(ratio, small, large):
    """The lists and the mean record size of two runs on different rank counts."""
    def lists(v, path=""):
        if isinstance(v, list):
            yield path, len(v)
        for k, x in v.items() if isinstance(v, dict) else []:
            yield from lists(x, path + "." + k)

    bad, size, shape = [], [], []
    for path in (small, large):
        with open(path) as f:
            lines = [line for line in f if line.strip()]
        recs = [json.loads(line) for line in lines]
        shape.append({r["cycle"]: dict(lists(r)) for r in recs})
        size.append(sum(len(line) for line in lines) / len(lines))
        first = shape[-1][recs[0]["cycle"]]
        print("%s: %d ranks, %d records, mean %.0f bytes, %d lists in a record, the longest %d" % (
            path, recs[0]["ranks"], len(recs), size[-1], len(first), max(first.values(), default=0)))
    for c in sorted(set(shape[0]) & set(shape[1])):
        if shape[0][c] != shape[1][c]:
            grown = sorted(k for k in set(shape[0][c]) | set(shape[1][c]) if shape[0][c].get(k) != shape[1][c].get(k))
            bad.append("cycle %d: lists %s of other lengths on other rank counts" % (c, ", ".join(grown[:6])))
    if not max(size) <= ratio * min(size):
        bad.append("mean record sizes %.0f and %.0f bytes differ by more than %g times" % (size[0], size[1], ratio))
    return bad


def check_ksp(i, r):
    """Each rank's KSPSolve time: present with a linear solve (ksp_its of a
    Poisson problem or a pressure solve, -1 or absent without), one per rank, within the cycle's KSP wall time t_ksp
    (the solve's maximum over ranks), thread CPU within wall."""
    if "t_ksp" not in r or r.get("ksp_its") is None or r["ksp_its"] < 0:
        return []
    wall, cpu, n = r["per_rank"].get("rank_ksp_time"), r["per_rank"].get("rank_ksp_cpu"), r["ranks"]
    if wall is None or cpu is None or len(wall) != n or len(cpu) != n:
        return ["cycle %d: rank_ksp_time/rank_ksp_cpu missing or not of length %d" % (i, n)]
    if not all(0 < w <= r["t_ksp"] * (1 + 1e-9) for w in wall):
        return ["cycle %d: rank_ksp_time %s not within (0, t_ksp %g]" % (i, wall, r["t_ksp"])]
    if not all(0 <= c <= w * 1.01 + 1e-3 for c, w in zip(cpu, wall)):
        return ["cycle %d: rank_ksp_cpu %s above rank_ksp_time %s" % (i, cpu, wall)]
    return []


def check_decide(path, recs, max_mean):
    missing = sorted({k for r in recs for k in FIELDS if k not in r})
    if missing or not recs:
        return ["%s: no records, or missing %s" % (path, ", ".join(missing))]
    bad = []
    excess = residual = 0.0
    for i, r in enumerate(recs):
        n = r["ranks"]
        # the phase model's loss of the phases measured when the rule ran:
        # all but the partition phase, which was running
        own = [v["own_cpu"] for k, v in r["phases"].items() if k != "partition"]
        loss = sum(t["max"] - t["mean"] for t in own) * n
        residual = min(residual, loss)
        excess += loss - residual
        if not (close(excess, r["excess_loss_rank_s"], 1e-5, 1e-9) and close(residual, r["residual_loss_rank_s"], 1e-5, 1e-9)):
            bad.append("%s cycle %d: loss since balance %g (residual %g), the cycles since the last rebalance give %g (%g)" % (
                path, i, r["excess_loss_rank_s"], r["residual_loss_rank_s"], excess, residual))
        d = r["lb_decision"]
        if d == "no_chance":
            if r["rebalanced"] or r["balance_cost_rank_s"] is not None:
                bad.append("%s cycle %d: no chance to balance, but rebalanced or a cost" % (path, i))
        elif d not in ("rebalance", "below_cost", "below_floor", "gain", "no_gain"):
            bad.append("%s cycle %d: decision '%s' is not the rule's (is -lb_threshold given?)" % (path, i, d))
        else:
            cost = r["balance_cost_rank_s"]
            if not close(cost, r["predicted_migration_s"] * n, 1e-5, 1e-12):
                bad.append("%s cycle %d: cost %g is not predicted_migration_s N" % (path, i, cost))
            if (d in ("rebalance", "gain")) != bool(r["rebalanced"]):
                bad.append("%s cycle %d: decision %s but rebalanced %s" % (path, i, d, r["rebalanced"]))
            gain, kept = r["predicted_cycle_gain_rank_s"], r["predicted_loss_rank_s"]
            if d == "rebalance" and not (r["excess_loss_rank_s"] >= cost and gain > 0 and r["excess_loss_rank_s"] * gain >= cost * kept * (1 - 1e-9)):
                bad.append("%s cycle %d: rebalanced with a loss %g, the share %g/%g of it the proposal removes below the cost %g" % (
                    path, i, r["excess_loss_rank_s"], gain, kept, cost))
            if d == "no_gain" and not (r["excess_loss_rank_s"] >= cost and r["excess_loss_rank_s"] * gain <= cost * kept * (1 + 1e-9)):
                bad.append("%s cycle %d: kept for no gain with a loss %g, gain %g of %g, cost %g" % (path, i, r["excess_loss_rank_s"], gain, kept, cost))
            if d == "below_cost" and r["excess_loss_rank_s"] >= cost:
                bad.append("%s cycle %d: kept with a loss %g at or above the cost %g" % (path, i, r["excess_loss_rank_s"], cost))
            if d == "gain" and not cost < gain:
                bad.append("%s cycle %d: rebalanced on a predicted gain %g with loss %g, cost %g" % (path, i, gain, r["excess_loss_rank_s"], cost))
        if r["rebalanced"]:
            excess, residual = 0.0, math.inf
    cycles = len(recs)
    rebalances = sum(1 for r in recs if r["rebalanced"])
    mean_i = sum(r["weighed_imbalance_pct"] for r in recs) / cycles
    work = sum(r["rank_time"]["mean"] * r["ranks"] for r in recs)
    print("%s: %s/%s, %d cycles, %d rebalances, mean measured I%% %.1f, %.1f%% of the local work lost to imbalance" % (
        path, recs[0]["lb_method"], recs[0]["lb_weights"], cycles, rebalances, mean_i, 100 * recs[-1]["lost_rank_s"] / work if work > 0 else 0))
    if not mean_i < max_mean:
        bad.append("%s: mean measured I%% %.1f is not below %g" % (path, mean_i, max_mean))
    # a rebalance on the coming cycle's predicted gain is the prediction's
    # call, checked per record above; the measured loss's are the rule's
    by_loss = sum(1 for r in recs if r["lb_decision"] == "rebalance")
    if not 2 * by_loss <= cycles:
        bad.append("%s: %d rebalances by measured loss in %d cycles, more than half" % (path, by_loss, cycles))
    # the one-cycle rule this replaced stopped rebalancing after 3-6 cycles:
    # none in the run's second half.  The rule acts once the loss reaches
    # the cost: it rebalances, or keeps a proposal not predicted to gain
    # its migration back (no_gain, checked per record above).  Count
    # weights' proposals often are not: CI's clean clone measured 4-7
    # rebalances in 84 cycles, none in the second half, where 27 of 42
    # cycles were no_gain.  So a twentieth of the cycles, one of them in
    # the second half, must be the rule's act, not its rebalance.
    acts = ("rebalance", "gain", "no_gain")
    acted = sum(1 for r in recs if r["lb_decision"] in acts)
    late = sum(1 for r in recs[cycles // 2:] if r["lb_decision"] in acts)
    if not (20 * acted >= cycles and late >= 1):
        bad.append("%s: the rule acted (rebalanced, or kept a proposal for no gain) in %d of %d cycles, %d in the second half: it stopped" % (
            path, acted, cycles, late))
    return bad


def check_timing(timing, count, k):
    bad = []
    it = [r["weighed_imbalance_pct"] for r in timing]
    ic = [r["weighed_imbalance_pct"] for r in count]
    print("timing weights: I%% per cycle %s" % " ".join("%.1f" % x for x in it))
    print("count weights:  I%% per cycle %s" % " ".join("%.1f" % x for x in ic))
    n = min(len(timing), len(count))
    if n < k + 8:
        return ["reports have fewer than %d cycles" % (k + 8)]
    if not all(r["rebalanced"] for r in timing[:k]):
        bad.append("timing run: not every one of the first %d cycles rebalanced" % k)
    # One cycle's I% on 2 ranks swings with the cores' own speed (5-20% on
    # a VM, even for pure arithmetic), a 2-rank fit can miss for a few
    # cycles, and a cycle in which another process took a rank's core or
    # cache is an outlier: the medians over all the cycles after the k
    # rebalances are compared, not a cycle against the first one (whose
    # I% ranged 6-67), and not means, which one disturbed cycle moves.
    mt, mc = statistics.median(it[k:n]), statistics.median(ic[k:n])
    print("cycles %d-%d: median I%% %.1f with timing weights, %.1f with count weights" % (k, n - 1, mt, mc))
    if not mt <= 0.5 * mc:
        bad.append("timing weights: median I%% %.1f of cycles %d-%d is more than half of count weights' %.1f" % (mt, k, n - 1, mc))
    return bad


COMMON = ("program dim problem mesh degree ranks cycle run_id ranks_file ranks_offset restarted sim_time step cells dofs "
          "t_solve t_estimate t_output t_adapt t_partition lb_method").split()
TIMELESS = {"sine", "lshape", "peak", "interface", "linear", "quadratic", "jump", "wavefront", "plate-hole"}


def check_shift(sfc, shift, floor, fraction, settle):
    bad = []
    for recs, name in ((sfc, "sfc"), (shift, "sfc-shift")):
        print("%-9s I%% per cycle %s" % (name, " ".join("%.1f" % r["weighed_imbalance_pct"] for r in recs)))
        if any(r["lb_method"] != name for r in recs):
            bad.append("the %s report was not written by lb_method %s" % (name, name))
    n = min(len(sfc), len(shift))
    if n < 9:
        return bad + ["reports have fewer than 9 cycles"]
    # cycle 0 ran on the even split and its step is sfc's in both runs; the
    # later cycles are the ones where shifting has had time to act
    later, last = n // 3, n - n // 3

    # medians: a cycle disturbed by another process is one outlier
    def median(recs, lo, hi):
        return statistics.median(r["weighed_imbalance_pct"] for r in recs[lo:hi])

    ms, mh = median(sfc, later, n), median(shift, later, n)
    first, final = median(shift, 1, 4), median(shift, last, n)
    print("cycles %d-%d: median I%% %.1f with sfc, %.1f with sfc-shift (%.2f of sfc's)" % (later, n - 1, ms, mh, mh / ms if ms > 0 else math.inf))
    print("sfc-shift: median I%% %.1f in cycles 1-3, %.1f in cycles %d-%d" % (first, final, last, n - 1))
    if not ms >= floor:
        bad.append("sfc: median I%% %.1f of cycles %d-%d is below %.1f" % (ms, later, n - 1, floor))
    if not mh <= fraction * ms:
        bad.append("sfc-shift: median I%% %.1f of cycles %d-%d is more than %.2f of sfc's %.1f" % (mh, later, n - 1, fraction, ms))
    if not final <= settle * first:
        bad.append("sfc-shift: median I%% %.1f of cycles %d-%d is more than %.2f of cycles 1-3's %.1f" % (final, last, n - 1, settle, first))
    return bad


def check_schema(paths):
    bad = []
    problems = set()
    for path in paths:
        for i, r in enumerate(load(path)):
            keys = list(r)
            if keys[:len(COMMON)] != COMMON:
                bad.append("%s record %d begins with %s" % (path, i, keys[:len(COMMON)]))
                continue
            lb_end = keys.index("gain_s")  # the last of the balancer's fields
            own = keys[lb_end + 1:]
            if not own or any(k in COMMON for k in own):
                bad.append("%s record %d: the problem's own fields %s" % (path, i, own))
            timeless = r["problem"] in TIMELESS
            if (r["sim_time"] is None) != timeless or (r["step"] is None) != timeless:
                bad.append("%s record %d: sim_time %s, step %s for %s" % (path, i, r["sim_time"], r["step"], r["problem"]))
            problems.add(r["problem"])
    print("schema of %d reports, problems %s" % (len(paths), " ".join(sorted(problems))))
    return bad


def check_bound(path, recs, tol):
    bad = []
    for r in recs:
        where = "%s cycle %d" % (path, r["cycle"])
        mx, opt, ratio = r.get("part_load_max"), r.get("part_load_optimum"), r.get("part_load_over_optimum")
        if not all(isinstance(v, (int, float)) for v in (mx, opt, ratio)) or not opt > 0:
            bad.append("%s: part_load_max %r, part_load_optimum %r, part_load_over_optimum %r" % (where, mx, opt, ratio))
            continue
        if mx < opt * (1 - 1e-9) or not close(ratio, mx / opt, 1e-12):
            bad.append("%s: largest part %.17g below the optimum %.17g, or ratio %.17g" % (where, mx, opt, ratio))
        if r["rebalanced"] and ratio > 1 + tol:
            bad.append("%s: rebalanced to %.6f of the optimum, above 1 + %g" % (where, ratio, tol))
    print("%s: %d records, methods %s, largest part over the optimum %.6f to %.6f" % (
        path, len(recs), " ".join(sorted({r["lb_method"] for r in recs})),
        min(r["part_load_over_optimum"] for r in recs), max(r["part_load_over_optimum"] for r in recs)))
    return bad


def main(argv):
    if len(argv) >= 3 and argv[1] == "fields":
        bad = check_fields(load(argv[2]))
    elif len(argv) == 5 and argv[1] == "size":
        bad = check_size(float(argv[2]), argv[3], argv[4])
    elif len(argv) >= 4 and argv[1] == "bound":
        bad = [b for p in argv[3:] for b in check_bound(p, load(p), float(argv[2]))]
    elif len(argv) >= 3 and argv[1] == "schema":
        bad = check_schema(argv[2:])
    elif len(argv) >= 4 and len(argv) % 2 == 0 and argv[1] == "decide":
        pairs = list(zip(argv[2::2], argv[3::2]))
        bad = [b for m, p in pairs for b in check_decide(p, load(p), float(m))]
    elif len(argv) >= 4 and argv[1] == "timing":
        bad = check_timing(load(argv[2]), load(argv[3]), int(argv[4]) if len(argv) > 4 else 3)
    elif len(argv) >= 4 and argv[1] == "shift":
        bad = check_shift(load(argv[2]), load(argv[3]), float(argv[4]) if len(argv) > 4 else 40.0,
                          float(argv[5]) if len(argv) > 5 else 0.5, float(argv[6]) if len(argv) > 6 else 0.75)
    else:
        print(__doc__)
        return 2
    for b in bad:
        print("FAILED: " + b)
    if not bad:
        print("%s check passed" % argv[1])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
