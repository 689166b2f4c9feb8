#!/usr/bin/env python3
"""Plots and a method table from amr2d/amr3d reports (-report FILE.jsonl).

    python3 postprocess/cycle_plots.py [-o DIR] [--repeats] REPORT.jsonl [MORE.jsonl ...]

Each report is one run (one line per cycle, the fields of the balancing
cycle).  A run is labelled "method/weights" ("+offload": a reactive run
with the reaction balanced apart from the mesh).  Without --repeats, runs
with the same label get their file name appended; with --repeats, runs
with the same label are repetitions of one configuration
(config/compare-methods.sh -r N), and the figures and the table show their
medians with the spread (least to greatest).  Every figure's title names
the problem, the mesh and the ranks; no legend sits over it.  Each method
keeps one colour and line style in every figure; the table, time.png and
the per-method panels list the methods fastest first (median wall time).
The I% everywhere is the phase model's measured one, cycle_imbalance_pct
(the weighed work's in reports from before it).  A cycle that rebalanced
but moved no cell is neither counted nor drawn as a rebalance.  A figure
that would be taller than about 1600 px is split into pages NAME-1.png,
NAME-2.png, ...  Writes into DIR (default: the current directory):

  methods.md     the problem, mesh and ranks, the fastest method named
                 first, then one row per method sorted by median wall time
                 (also printed); 8 columns, each defined under the table:
                 wall time (median [least, greatest]), the phase model's
                 time, its loss to imbalance, the mean I% (per cycle the
                 median over the repetitions, averaged over the cycles:
                 imbalance.png's diamond and order), the rebalances that
                 moved cells, the cells migrated, the balancing and
                 migrating time (none: measure only)
  imbalance.png  left: the I% per cycle, one line per method (the band
                 around it: least to greatest over the repetitions), or
                 with more than 4 methods one small panel each (the others
                 grey); right: per method, the I% of all its cycles as a
                 box (quartiles; whiskers 5-95%), the mean of methods.md
                 (white diamond) and each repetition's mean (dots), sorted
                 by that mean
  migrated.png   the same for the cells migrated per cycle
  loads.png      each rank's predicted against its measured load (both as
                 load / mean), every rank of every cycle (the side file's)
  time.png       per method, three panels with their own scales: the run's
                 wall time with the phase model's time (sum over cycles and
                 phases of the slowest rank's own work, model_total_s); the
                 time lost to imbalance by the phase model (lost_s: sum over
                 cycles of each phase's slowest rank's own work less the
                 ranks' mean), split by phase; the balancer's and the
                 migration's time, values beside the bars (no bar for none).
                 Linear axes in s, ms or us with plain ticks.  Bars are
                 medians, whiskers least to greatest of the repetitions
  decision.png   the -lb_threshold rule of each run that decided (a run
                 without -lb_threshold rebalances at every chance and has no
                 panel), at most 8 runs a page: the time lost to imbalance
                 since the last rebalance (beyond the least loss of a cycle
                 since then) against the predicted cost of rebalancing, per
                 cycle in rank-ms, the cycles that rebalanced on measured
                 loss (triangles) and on predicted gain (circles), and those
                 kept for the proposal's too small gain (squares); below, the
                 I% the floor compares against the floor (--threshold PCT,
                 else the least floor the report shows: its greatest I% kept
                 below it) (first repetition)
  weights.png    the weight per load type over the cycles (solid) of each
                 run whose weights follow measurements (timing, phases) or
                 that measured per-cell costs, against the measured costs'
                 mean per type, weights_measured, scaled the same way
                 (dashed), where there are any; at most 9 runs a page (first
                 repetition); costs spanning more than a factor 10 on a log
                 axis, where a cost held at 0 (the fit's clamp) is a
                 triangle on its bottom edge

Reports of different problems are refused (one error line naming each
file's problem): every figure's title and the table assume one problem.
A figure that has nothing to show is not written, an older one of that
name (and its pages) in DIR is removed, and one line on standard error
says why.
"""
import argparse
import glob
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.transforms import blended_transform_factory  # noqa: E402

import report_ranks  # noqa: E402

# 14 colours, each with its own line style and marker: a method keeps its
# pair in every figure, and no two of 14 methods share one
COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray", "tab:olive",
           "tab:cyan", "black", "#e6ab02", "#1b9e77", "#e7298a"]
STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "<", ">", "*", "h", "p", "8", "d"]


def style(i):
    return {"color": COLOURS[i % len(COLOURS)], "ls": STYLES[i % len(STYLES)]}


def load(path):
    recs = report_ranks.records(path)
    if not recs:
        raise SystemExit("cycle_plots.py: error: %s has no records" % path)
    for key in ("lb_method", "weighed_imbalance_pct", "rank_time", "lost_rank_s", "excess_loss_rank_s"):
        if key not in recs[0]:
            raise SystemExit("cycle_plots.py: error: %s has no field '%s' (not a report of the balancing cycle)" % (path, key))
    return recs


def refuse_mixed(paths, runs):
    """One figure compares methods on one problem: reports of several
    problems are refused (one error line naming each file's problem) rather
    than grouped, since every figure's title, colours and table rows assume
    one problem, and the caller can plot each problem into its own -o."""
    by = {}
    for p, recs in zip(paths, runs):
        by.setdefault(str(recs[0].get("problem", "?")), []).append(os.path.basename(p))
    if len(by) > 1:
        raise SystemExit("cycle_plots.py: error: the reports are of %d problems (%s): plot each problem with its own -o" % (
            len(by), "; ".join("%s: %s" % (prob, ", ".join(files)) for prob, files in sorted(by.items()))))


def groups(paths, runs, repeats):
    """[(label, [run, ...]), ...]: one entry per configuration."""
    # a reactive run with the reaction balanced apart from the mesh
    base = ["%s/%s%s" % (r[0]["lb_method"], r[0]["lb_weights"], " +offload" if r[0].get("offload") else "") for r in runs]
    if repeats:
        out = {}
        for b, recs in zip(base, runs):
            out.setdefault(b, []).append(recs)
        return list(out.items())
    return [(b if base.count(b) == 1 else "%s (%s)" % (b, os.path.splitext(os.path.basename(p))[0]), [recs])
            for b, p, recs in zip(base, paths, runs)]


def context(runs):
    """The problem, mesh and ranks of the runs, for titles."""
    def joined(key):
        return ", ".join(sorted({str(r[0].get(key, "?")) for r in runs}))
    return "%s on %s, %s ranks" % (joined("problem"), joined("mesh"), joined("ranks"))


def moved(r):
    """A cycle that rebalanced and moved cells.  The report also marks as
    rebalanced a cycle whose new partition is the old one (no cell moved,
    e.g. diffusion stopped before any cut shifted); to the reader that is no
    rebalance, so it is neither counted nor drawn as one."""
    return r["rebalanced"] and r["migrated_cells_tot"] > 0


def summary(recs):
    last = recs[-1]
    # model, model_lost: the phase model's (reports before it have none), the
    # measured sum over cycles and phases of the slowest rank's own work and its loss
    return {"total": last["total_s"], "migrated": sum(r["migrated_cells_tot"] for r in recs), "rebalances": sum(1 for r in recs if moved(r)),
            "lb": last["lb_total_s"], "mig": last["migrate_total_s"], "lb_mig": last["lb_total_s"] + last["migrate_total_s"],
            "model": last.get("model_total_s", float("nan")), "model_lost": last.get("lost_s", float("nan")), "phase_lost": phase_losses(recs)}


def phase_losses(recs):
    """Each phase's loss summed over the cycles, by name in report order:
    the slowest rank's own work less the ranks' mean (their sum is lost_s)."""
    out = {}
    for r in recs:
        for name, ph in r.get("phases", {}).items():
            out[name] = out.get(name, 0.0) + ph["own_cpu"]["max"] - ph["own_cpu"]["mean"]
    return out


def spread(sums, key):
    """Median, least and greatest of a summary field over repetitions."""
    v = [s[key] for s in sums]
    return statistics.median(v), min(v), max(v)


def per_cycle(reps, key):
    """Cycles and the median, least and greatest of key over the repetitions."""
    by = {}
    for recs in reps:
        for r in recs:
            by.setdefault(r["cycle"], []).append(r[key])
    cyc = sorted(by)
    return cyc, [statistics.median(by[c]) for c in cyc], [min(by[c]) for c in cyc], [max(by[c]) for c in cyc]


def cycle_mean(reps, key):
    """The mean over cycles of the median over the repetitions: the one
    statistic by which imbalance.png's summary and methods.md's I% column
    both rank the methods, so that the two cannot disagree."""
    return statistics.fmean(per_cycle(reps, key)[1])


def measure_only(reps):
    """A run of -lb_method none: it measures, and no balancer runs."""
    return reps[0][0]["lb_method"] == "none"


def save(fig, path):
    fig.savefig(path, dpi=110)
    plt.close(fig)


def remove(path):
    if os.path.exists(path):
        os.remove(path)


def not_written(path, why):
    """A figure with nothing to show: an older one of its name (and its
    pages) removed, and one line saying why, so that a figure the README
    lists is never missing without a word."""
    pages(path, [], 1)
    print("cycle_plots.py: %s not written: %s" % (os.path.basename(path), why), file=sys.stderr)


def pages(path, items, most):
    """[(file, items), ...]: the items on one page, path, when at most
    `most`, else spread evenly over path-1, path-2, ... (NAME-K.png), so
    that no figure grows past about 1600 px.  Older pages of the figure,
    and its one-page file, are removed first: a folder never holds pages of
    two runs."""
    stem, ext = os.path.splitext(path)
    for old in [path] + glob.glob(glob.escape(stem) + "-[0-9]*" + ext):
        remove(old)
    if len(items) <= most:
        return [(path, items)] if items else []
    count = -(-len(items) // most)
    each = -(-len(items) // count)
    return [("%s-%d%s" % (stem, k + 1, ext), items[k * each:(k + 1) * each]) for k in range(count)]


# more lines than this in one panel cannot be told apart: small multiples
ONE_PANEL = 4


def per_cycle_plot(grps, key, ylabel, path, title):
    """Up to ONE_PANEL methods share one per-cycle panel; more get one small
    panel each (the others in light grey behind it, the same axes), beside
    the summary of all."""
    n = len(grps)
    repeated = any(len(g[1]) > 1 for g in grps)
    # more than a few bands hide each other: then the summary shows the spread
    bands = repeated and n <= ONE_PANEL
    curves = [per_cycle(reps, key) for _, reps in grps]
    if n <= ONE_PANEL:
        fig, (ax, box) = plt.subplots(1, 2, figsize=(14, 5.5), gridspec_kw={"width_ratios": [3, 2]})
        for i, (name, reps) in enumerate(grps):
            cyc, med, lo, hi = curves[i]
            ax.plot(cyc, med, lw=1.3, label=name, marker="o" if len(cyc) == 1 else None, **style(i))  # one cycle: a point
            if bands:
                ax.fill_between(cyc, lo, hi, color=style(i)["color"], alpha=0.12, lw=0)
        ax.set_xlabel("cycle")
        cycle_axis(ax)
        ax.set_ylabel(ylabel)
        ax.set_title("per cycle" + (" (median of the repetitions%s)" % (", band: least to greatest" if bands else "") if repeated else ""),
                     fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, title="method/weights", title_fontsize=8, frameon=False)
    else:
        # at most 6 rows of panels: the figure stays under 1600 px tall
        cols = 3 if n <= 9 else max(4, -(-n // 6))
        rows = (n + cols - 1) // cols
        fig = plt.figure(figsize=(18, 1.2 + 1.9 * rows))
        outer = fig.add_gridspec(1, 2, width_ratios=[3, 1.4], wspace=0.25)
        inner = outer[0].subgridspec(rows, cols, hspace=0.45, wspace=0.08)
        first = None
        for i, (name, reps) in enumerate(grps):
            ax = fig.add_subplot(inner[i // cols, i % cols], sharex=first, sharey=first)
            first = first or ax
            # one artist for the grey curves: 30 methods drew 870 lines
            ax.add_collection(LineCollection([list(zip(c[0], c[1])) for j, c in enumerate(curves) if j != i], lw=0.6, colors="0.82", zorder=1))
            cyc, med, _, _ = curves[i]
            ax.plot(cyc, med, lw=1.4, color=style(i)["color"], zorder=2, marker="o" if len(cyc) == 1 else None)
            ax.set_title(name, fontsize=8, pad=2)
            cycle_axis(ax)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
            if i % cols:
                ax.tick_params(labelleft=False)
            if i // cols == rows - 1 or i + cols >= n:
                ax.set_xlabel("cycle", fontsize=7)
            else:
                ax.tick_params(labelbottom=False)
        fig.text(0.01, 0.5, ylabel + (" (median of the repetitions)" if repeated else ""), rotation=90, va="center", fontsize=9)
        fig.text(0.35, 1 - 0.75 / (1.2 + 1.9 * rows), "per cycle, one panel per method (grey: the other methods)", ha="center", fontsize=9)
        box = fig.add_subplot(outer[1])
    # the summary: every cycle of every repetition, sorted by the mean
    means = [cycle_mean(reps, key) for _, reps in grps]
    order = sorted(range(len(grps)), key=lambda i: means[i])
    data = [[r[key] for recs in grps[i][1] for r in recs] for i in order]
    b = box.boxplot(data, vert=False, whis=(5, 95), showfliers=False, patch_artist=True, widths=0.6,
                    medianprops={"color": "black", "lw": 1})
    for patch, i in zip(b["boxes"], order):
        patch.set_facecolor(style(i)["color"])
        patch.set_alpha(0.55)
    for y, i in enumerate(order, start=1):
        box.plot([means[i]], [y], "D", color="white", mec="black", ms=6, zorder=3)
        if repeated:
            each = [statistics.fmean(r[key] for r in recs) for recs in grps[i][1]]
            box.plot(each, [y] * len(each), ".", color="black", ms=4, zorder=4)
    box.set_yticks(range(1, len(order) + 1))
    box.set_yticklabels([grps[i][0] for i in order], fontsize=8)
    box.set_xlabel(ylabel)
    box.set_title("all cycles, lowest mean on top:\nbox quartiles, whiskers 5-95%%, %s mean%s" % (
        "\u25c7", " of the cycles' medians\ndots: each repetition's mean" if repeated else ""), fontsize=9)
    box.invert_yaxis()
    box.grid(alpha=0.3, axis="x")
    fig.suptitle(title)
    if n <= ONE_PANEL:
        fig.tight_layout()
    else:
        fig.subplots_adjust(left=0.05, right=0.99, bottom=0.35 / (1.2 + 1.9 * rows) + 0.05, top=1 - 1.0 / (1.2 + 1.9 * rows))
    save(fig, path)


def loads_plot(grps, path, title):
    fig, (ax, leg) = plt.subplots(1, 2, figsize=(9, 5.5), gridspec_kw={"width_ratios": [3, 1.3]})
    hi = 1.0
    for i, (name, reps) in enumerate(grps):
        xs = [p for recs in reps for r in recs for p in report_ranks.values(r, "rank_load_predicted") or []]
        ys = [m for recs in reps for r in recs for m in report_ranks.values(r, "rank_load_measured") or []]
        hi = max([hi] + xs + ys)
        ax.scatter(xs, ys, s=10, alpha=0.6, marker=MARKERS[i % len(MARKERS)], color=style(i)["color"], label=name)
    ax.plot([0, hi], [0, hi], color="black", lw=0.8)
    ax.set_xlabel("predicted load per rank (weights, mean 1)")
    ax.set_ylabel("measured load per rank (local work, mean 1)")
    ax.grid(alpha=0.3)
    leg.axis("off")
    leg.legend(*ax.get_legend_handles_labels(), loc="center left", fontsize=8, frameon=False, markerscale=1.5)
    fig.suptitle(title)
    fig.tight_layout()
    save(fig, path)


def unit_of(values):
    """(factor, name) that puts seconds into readable numbers: s, ms or us."""
    top = max([abs(v) for v in values if v == v] + [0.0])
    for factor, name in ((1.0, "s"), (1e3, "ms"), (1e6, "\u00b5s")):
        if top * factor >= 1 or factor == 1e6:
            return factor, name
    return 1.0, "s"


def cycle_axis(ax):
    """Whole cycles on the x axis (no 2.5)."""
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True, min_n_ticks=1))


def plain(ax, axis="x"):
    """Plain tick labels: no offset or 1e-3 multiplier above the axis."""
    fmt = matplotlib.ticker.ScalarFormatter(useOffset=False)
    fmt.set_scientific(False)
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(fmt)


def time_plot(grps, sums, path, title):
    """Three panels, each on a linear axis in its own unit (s, ms or us)
    with plain tick labels; the overheads, which span decades, carry their
    values beside the bars; a run of none (measure only) has no balancer
    and no overhead bar."""
    n = len(grps)
    ys = list(range(n))
    # 0.4 in per method, at most 14 in (1540 px) however many methods
    height = min(2.6 + 0.4 * n, 14)
    fig, axes = plt.subplots(1, 3, figsize=(15, height), sharey=True)
    repeated = any(len(g[1]) > 1 for g in grps)

    def values(key):
        return [spread(s, key) for s in sums]  # [(median, least, greatest), ...]

    def bars(ax, vals, factor, y, height, label, **kw):
        med = [v[0] * factor for v in vals]
        err = [[(v[0] - v[1]) * factor for v in vals], [(v[2] - v[0]) * factor for v in vals]] if repeated else None
        ax.barh(y, med, height=height, xerr=err, label=label, error_kw={"lw": 0.8, "capsize": 2}, **kw)
        return med

    total, model = values("total"), values("model")
    f, u = unit_of([v[2] for v in total])
    bars(axes[0], total, f, ys, 0.7, "whole run (wall)", color="#c6dbef")
    bars(axes[0], model, f, ys, 0.35, "phase model: slowest rank's own work per phase", color="#2171b5")
    axes[0].set_xlabel("time (%s)" % u)
    axes[0].set_title("run time", fontsize=10)
    # each phase's loss stacked, the medians over repetitions (the whisker
    # is the spread of the total, lost_s)
    names = list(dict.fromkeys(k for sm in sums for one in sm for k in one["phase_lost"]))
    lost = values("model_lost")
    f, u = unit_of([v[2] for v in lost])
    left = [0.0] * n
    cmap = plt.get_cmap("Set2")
    for k, name in enumerate(names):
        w = [statistics.median(one["phase_lost"].get(name, 0.0) for one in sm) * f for sm in sums]
        axes[1].barh(ys, w, left=left, height=0.6, color=cmap(k % 8), label="lost in " + name)
        left = [a + b for a, b in zip(left, w)]
    if repeated:
        axes[1].errorbar(left, ys, xerr=[[(v[0] - v[1]) * f for v in lost], [(v[2] - v[0]) * f for v in lost]], fmt="none", ecolor="k",
                         lw=0.8, capsize=2)
    axes[1].set_xlabel("time (%s)" % u)
    axes[1].set_title("lost to imbalance (phase model), by phase\n(sum over cycles of the slowest rank's own work - the mean)", fontsize=10)
    # none runs no balancer: what it reports as balancer time is its
    # measuring, which a bar named "balancer" would misstate
    runs = [i for i in ys if not measure_only(grps[i][1])]
    lb = [spread(sums[i], "lb") for i in runs]
    mig = [spread(sums[i], "mig") for i in runs]
    f, u = unit_of([v[2] for v in lb + mig])
    a = bars(axes[2], lb, f, [y - 0.2 for y in runs], 0.4, "balancer (method and decision)", color="tab:green")
    b = bars(axes[2], mig, f, [y + 0.2 for y in runs], 0.4, "migrating cells", color="tab:purple")
    axes[2].set_xlabel("wall time (%s), values beside the bars" % u)
    axes[2].set_title("balancing overheads", fontsize=10)
    # a linear axis keeps bar lengths honest; the small ones get their number
    # (beyond the whisker, where there is one)
    ends = [v[2] * f if repeated else v[0] * f for v in lb + mig]
    top = max(ends + [1e-30])
    for y, off, v, end in zip(runs + runs, [-0.2] * len(runs) + [0.2] * len(runs), a + b, ends):
        axes[2].text(end + 0.015 * top, y + off, "%.3g %s" % (v, u), va="center", fontsize=7)
    for y in ys:
        if y not in runs:
            axes[2].text(0.015 * top, y, "measure only: no balancer", va="center", fontsize=7, color="0.3")
    axes[2].set_xlim(0, top * 1.25)
    for ax in axes:
        ax.grid(alpha=0.3, axis="x")
        ax.set_xlim(left=0)
        plain(ax)
    handles = [h for ax in axes for h in ax.get_legend_handles_labels()[0]]
    fig.legend(handles, [h.get_label() for h in handles], loc="lower center", ncol=5, fontsize=8, frameon=False)
    axes[0].set_yticks(ys)
    axes[0].set_yticklabels([g[0] for g in grps], fontsize=8)
    axes[0].invert_yaxis()
    reps = max(len(g[1]) for g in grps)
    fig.suptitle(title + ("" if reps == 1 else " (bars: medians of %d runs, whiskers: least to greatest)" % reps))
    fig.tight_layout(rect=(0, 0.7 / height, 1, 1 - 0.2 / height))
    save(fig, path)


def decided(recs):
    return any(r.get("lb_decision") in ("rebalance", "below_floor", "below_cost", "no_gain") for r in recs)


def floor_input(recs):
    """Per cycle the I% the floor is compared with, and its label: the
    phase model's (the greater of the measured and the kept partition's
    predicted), which the report holds as decision_imbalance_pct."""
    return [r["decision_imbalance_pct"] if r.get("decision_imbalance_pct") is not None else r["cycle_imbalance_pct"] for r in recs], \
        "I% of the phase model (measured or kept, the greater)"


def floor_pct(recs, ipct, given):
    """The -lb_threshold floor: given (--threshold), else what the report
    shows of it (it does not hold the option): at least the greatest I%
    kept below it.  (value, label)."""
    if given is not None:
        return given, "-lb_threshold %g%%" % given
    kept = [v for v, r in zip(ipct, recs) if r.get("lb_decision") == "below_floor"]
    if not kept:
        return None, None
    return max(kept), "floor \u2265 %.1f%% (greatest I%% kept)" % max(kept)


def decision_plot(grps, path, title, threshold=None):
    """Per run two panels: the ski-rental rule in rank-ms (the loss since
    the last rebalance and the threshold it must reach, the predicted cost,
    with the cycles that rebalanced on measured loss and those that did on
    predicted gain told apart) and the floor rule (the I% against the
    -lb_threshold floor).  At most 8 runs a page (decision-1.png, ...)."""
    runs = [(name, reps[0], len(reps)) for name, reps in grps if decided(reps[0])]
    if not runs:
        not_written(path, "no run decided with -lb_threshold")
        return
    for page, chunk in pages(path, runs, 8):
        decision_page(chunk, page, title, threshold)


def decision_page(runs, path, title, threshold):
    cols = 1 if len(runs) <= 3 else 2
    rows = (len(runs) + cols - 1) // cols
    # 3.1 in a run's pair of panels: 4 rows and the title and legend in 14 in (1540 px)
    height = 1.6 + 3.1 * rows
    fig, axes = plt.subplots(2 * rows, cols, figsize=(8 * cols, height), squeeze=False, sharex=True,
                             gridspec_kw={"height_ratios": [2, 1] * rows})
    nan = float("nan")
    ms = 1e3
    for k, (name, recs, nrep) in enumerate(runs):
        ax, fl = axes[2 * (k // cols)][k % cols], axes[2 * (k // cols) + 1][k % cols]
        cyc = [r["cycle"] for r in recs]
        ax.plot(cyc, [ms * r["excess_loss_rank_s"] for r in recs], lw=1, color="tab:blue",
                label="loss since the last rebalance, beyond the residual")
        # no cost on cycles that had no chance to balance (null in the report)
        ax.plot(cyc, [ms * r["balance_cost_rank_s"] if r["balance_cost_rank_s"] is not None else nan for r in recs],
                lw=1.2, color="tab:red", ls="--", label="threshold: predicted cost of rebalancing")
        loss = [r for r in recs if r.get("lb_decision") == "rebalance" and moved(r)]
        gain = [r for r in recs if r.get("lb_decision") == "gain" and moved(r)]
        still = sum(1 for r in recs if r["rebalanced"] and not moved(r))
        ax.plot([r["cycle"] for r in loss], [ms * r["excess_loss_rank_s"] for r in loss], "^", color="black", ms=6,
                label="rebalanced: measured loss reached the cost")
        ax.plot([r["cycle"] for r in gain], [ms * (r.get("predicted_cycle_gain_rank_s") or 0) for r in gain], "o", mfc="none",
                mec="tab:orange", mew=1.5, ms=6, label="rebalanced: next cycle's predicted gain beat the cost")
        nogain = [r for r in recs if r.get("lb_decision") == "no_gain"]
        ax.plot([r["cycle"] for r in nogain], [ms * r["excess_loss_rank_s"] for r in nogain], "s", mfc="none", mec="tab:purple", ms=5,
                label="kept: the proposal predicted to gain less than its cost")
        ax.set_yscale("symlog", linthresh=1e-3, linscale=0.5)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
        ax.set_ylabel("rank-ms")
        ax.set_title("%s: %d rebalances in %d cycles (%d on measured loss, %d on predicted gain%s)%s" % (
            name, sum(1 for r in recs if moved(r)), len(recs), len(loss), len(gain),
            "; %d decided but moved no cell" % still if still else "", "" if nrep == 1 else ", run 1 of %d" % nrep), fontsize=8)
        ax.grid(alpha=0.3)
        ipct, what = floor_input(recs)
        fl.plot(cyc, ipct, lw=1, color="tab:gray")
        below = [(c, v) for c, v, r in zip(cyc, ipct, recs) if r.get("lb_decision") == "below_floor"]
        fl.plot([c for c, _ in below], [v for _, v in below], "x", color="black", ms=6, mew=1.5, label="kept: I% at or below the floor")
        value, label = floor_pct(recs, ipct, threshold)
        if value is not None:
            fl.axhline(value, color="tab:red", lw=1.2, ls=":", label="the -lb_threshold floor")
            fl.text(1.005, value, label, transform=blended_transform_factory(fl.transAxes, fl.transData), fontsize=7, va="center",
                    color="tab:red")
        fl.set_ylim(bottom=0)
        fl.set_ylabel("I%")
        fl.set_title(what, fontsize=8, loc="left")
        plain(fl, "y")
        fl.grid(alpha=0.3)
    for k in range(len(runs), rows * cols):
        axes[2 * (k // cols)][k % cols].axis("off")
        axes[2 * (k // cols) + 1][k % cols].axis("off")
        # the run above is the last of its column: its cycles labelled
        axes[2 * (k // cols) - 1][k % cols].tick_params(labelbottom=True)
        axes[2 * (k // cols) - 1][k % cols].set_xlabel("cycle")
    for ax in axes[-1]:
        ax.set_xlabel("cycle")
    cycle_axis(axes[-1][0])
    handles, labels = axes[0, 0].get_legend_handles_labels()
    for h, lab in zip(*axes[1, 0].get_legend_handles_labels()):
        handles.append(h)
        labels.append(lab)
    # the title on top, the legend at the bottom: apart, whatever the height
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.75 / height, 0.9 if cols == 1 else 0.95, 1 - 0.3 / height))
    save(fig, path)


# the weights modes whose weights follow measurements, cycle by cycle
FITTED = ("timing", "phases")


def weights_plot(grps, path, title):
    """The weights per type of each run that fitted them (timing, phases)
    or measured per-cell costs, against weights_measured where there are
    any; at most 9 runs a page (weights-1.png, ...)."""
    shown = [(name, reps[0]) for name, reps in grps
             if reps[0][0]["lb_weights"] in FITTED or any(x is not None for r in reps[0] for x in r.get("weights_measured", []))]
    if not shown:
        not_written(path, "no run fits weights or measures its cells' costs (%s weights only)" % ", ".join(
            sorted({reps[0][0]["lb_weights"] for _, reps in grps})))
        return
    for page, chunk in pages(path, shown, 9):
        weights_page(chunk, page, title)


def weights_page(measured, path, title):
    cols = min(3, len(measured))
    rows = (len(measured) + cols - 1) // cols
    # 3 rows of panels, each with its legend below, in 13.6 in (1496 px)
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 1.0 + 4.2 * rows), squeeze=False)
    nan = float("nan")
    for k, (name, recs) in enumerate(measured):
        ax = axes[k // cols][k % cols]
        bottom = blended_transform_factory(ax.transData, ax.transAxes)
        cyc = [r["cycle"] for r in recs]
        drawn = []
        for t in range(len(recs[0]["weights"])):
            c = "C%d" % t
            w = [r["weights"][t] for r in recs]
            wm = [r.get("weights_measured", [None] * (t + 1))[t] for r in recs]
            drawn += [x for x in w + wm if x is not None and x > 0]
            ax.plot(cyc, [x if x > 0 else nan for x in w], color=c, label="type %d: weights" % t)
            if any(x is not None for x in wm):
                ax.plot(cyc, [nan if x is None or x <= 0 else x for x in wm], color=c, ls="--", label="type %d: measured" % t)
            zero = [x for x, v in zip(cyc, w) if v <= 0]
            if zero:
                ax.plot(zero, [0] * len(zero), "v", color=c, ms=6, transform=bottom, clip_on=False,
                        label="type %d: weight 0 (clamped)" % t)
        # costs that span decades (a reacting cell against a plain one) on a
        # log axis, labelled at the decades; within a factor 10 a log axis
        # has no decade to label (it would read 9x10^-1): linear
        if drawn and max(drawn) > 10 * min(drawn):
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
        else:
            plain(ax, "y")
        ax.set_xlabel("cycle")
        cycle_axis(ax)
        ax.set_ylabel("cost per cell (mean cell weight 1)")
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    for k in range(len(measured), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(title.replace(": ", ":\n", 1), fontsize=10)
    fig.tight_layout()
    save(fig, path)


# methods.md's columns, each with its definition (written under the table;
# {key}: the report field of the I%)
COLUMNS = [
    ("run", "method/weights; +offload: a reactive run with the reaction balanced apart from the mesh"),
    ("wall s", "the run's measured wall time (the last record's total_s): the median over the repetitions "
               "[least, greatest]; the rows are sorted by it, fastest first"),
    ("modelled s", "the phase model's time: the sum over cycles and phases of the slowest rank's own work (model_total_s)"),
    ("lost to imbalance s", "the phase model's loss: the sum over cycles and phases of the slowest rank's own work "
               "less the ranks' mean (lost_s)"),
    ("mean I% (phase model)", "the phase model's measured I% of each cycle (`{key}`), its median over the repetitions, averaged over "
                "the cycles: the diamond of imbalance.png, whose summary ranks the methods by it"),
    ("rebalances", "cycles that rebalanced and moved cells (one that moved no cell is not counted)"),
    ("migrated cells", "cells migrated, summed over the cycles"),
    ("balancing + migrating s", "the balancer's time (lb_total_s) and the migration's (migrate_total_s); "
                                "none: measure only, no balancer"),
]


def table(grps, sums, key, title):
    """methods.md: the fastest method named first, then one row per label
    in the order given (main's: by the median wall time), each column
    defined under the table.  Every value but wall s is the median over
    the repetitions."""
    wall = [spread(ss, "total") for ss in sums]
    order = list(range(len(grps)))
    counts = sorted({len(reps) for _, reps in grps})
    runs = ("one run each" if counts == [1] else "medians of %d runs each" % counts[0] if len(counts) == 1 else
            "medians of the runs, runs per method: " + ", ".join("%s %d" % (name, len(reps)) for name, reps in grps))
    best, rest = order[0], order[1:]
    lines = ["%s; %s" % (title, runs), "",
             "Fastest here: **%s**, %.3f s wall (median)%s." % (
                 grps[best][0], wall[best][0],
                 "" if not rest else "; next %s, %.3f s%s" % (
                     grps[rest[0]][0], wall[rest[0]][0],
                     " (their ranges overlap: these runs do not tell the two apart)" if wall[rest[0]][1] <= wall[best][2] else "")),
             "",
             "| " + " | ".join(c for c, _ in COLUMNS) + " |",
             "|" + "|".join(["---"] + ["--:"] * (len(COLUMNS) - 1)) + "|"]
    for i in order:
        name, reps = grps[i]
        m = {k: spread(sums[i], k)[0] for k in ("model", "model_lost", "rebalances", "migrated", "lb_mig")}
        lines.append("| %s | %s | %.3f | %.3f | %.1f | %d | %d | %s |" % (
            name, "%.3f" % wall[i][0] if len(reps) == 1 else "%.3f [%.3f, %.3f]" % wall[i], m["model"], m["model_lost"],
            cycle_mean(reps, key), m["rebalances"], m["migrated"], "measure only" if measure_only(reps) else "%.4f" % m["lb_mig"]))
    lines.append("")
    lines += ["- **%s**: %s" % (c, d.format(key=key)) for c, d in COLUMNS]
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog="figures: see the module's description")
    ap.add_argument("-o", dest="out", default=".", help="output directory (created if missing)")
    ap.add_argument("--repeats", action="store_true", help="reports with the same method/weights are repetitions: medians and spread")
    ap.add_argument("--threshold", type=float, metavar="PCT", help="the runs' -lb_threshold, drawn in decision.png (the reports do not hold it)")
    ap.add_argument("reports", nargs="+", help="amr2d/amr3d -report FILE.jsonl, one per run")
    a = ap.parse_args(argv)
    runs = []
    for p in a.reports:
        try:
            runs.append(load(p))
        except (OSError, ValueError) as e:
            raise SystemExit("cycle_plots.py: error: %s: %s" % (p, e))
    refuse_mixed(a.reports, runs)
    grps = groups(a.reports, runs, a.repeats)
    sums = [[summary(recs) for recs in reps] for _, reps in grps]
    # methods.md, time.png and the per-method panels list the methods
    # fastest first (median wall time): the table's answer, read the same
    # way in every figure
    order = sorted(range(len(grps)), key=lambda i: spread(sums[i], "total")[0])
    grps, sums = [grps[i] for i in order], [sums[i] for i in order]
    title = context(runs)
    os.makedirs(a.out, exist_ok=True)
    out = lambda name: os.path.join(a.out, name)  # noqa: E731
    # the phase model's I% (sum over phases of the slowest rank against the
    # mean), where the reports have it, else the weighed work's: the same
    # in imbalance.png and methods.md
    if all("cycle_imbalance_pct" in r for recs in runs for r in recs):
        ikey, iname = "cycle_imbalance_pct", "measured imbalance I% of the phase model"
    else:
        ikey, iname = "weighed_imbalance_pct", "measured imbalance I% of the weighed work"
    per_cycle_plot(grps, ikey, iname, out("imbalance.png"), "imbalance: " + title)
    per_cycle_plot(grps, "migrated_cells_tot", "cells migrated", out("migrated.png"), "migration: " + title)
    loads_plot(grps, out("loads.png"), "predicted against measured load: " + title)
    time_plot(grps, sums, out("time.png"), "time: " + title)
    decision_plot(grps, out("decision.png"), "the -lb_threshold rule: " + title, a.threshold)
    weights_plot(grps, out("weights.png"), "weights per load type (against the measured costs where measured): " + title)
    md = table(grps, sums, ikey, "Methods on " + title)
    with open(out("methods.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
