#!/usr/bin/env python3
"""Kill a run of amr2d/amr3d with SIGKILL after it wrote a checkpoint,
restart it (possibly on another number of ranks) and compare the whole
run's report with an uninterrupted run's.

  restart_check.py --mpiexec CMD... --exe AMR --dir DIR --ranks N --restart-ranks M
                   --kill-at SEQ --compare exact|conserved [--leftover] [--vtk] -- OPTIONS...

exact:     every record field but the measured times equal, bit for bit,
           and so every rank's values in the side file but the measured
           (same rank count, count or model weights);
Either way the restarted run's summary lines give the whole report's
totals (check_phases.py's check_summary, where it prints them), and the
restarted report's side file holds the killed run's
blocks of the kept cycles byte for byte, then one block per later cycle
where its record says (postprocess/report_ranks.py reads each).
conserved: cells, dofs, load types and steps equal, mass (and the species
           masses of reactive-transport) and errors to the solver's
           tolerance, the mass balances to round-off.
--leftover plants what a writer killed halfway through the next checkpoint
leaves (a truncated forest file of the next sequence and a truncated
P.manifest.new) before the restart, which must use the previous one.
--fail-write PIECE --shim LIB
           instead of the kill, the writes of checkpoint --kill-at's PIECE
           (forest, state, manifest) fail as on a full disk (LIB, the
           LD_PRELOAD shim tests/failwrite.c): the run must end with a
           non-zero status and one error line naming the file and the
           system's reason, leaving checkpoint --kill-at - 1 whole, which
           the restart continues from.  PIECE report: the report's disk
           fills halfway through the record of the cycle that checkpoint
           --kill-at would follow; the error line must say the record was
           cut back, the report must end with the record before it, and a
           cut record is then planted at its end (what a kill halfway
           through a write leaves), which the restart must cut back in one
           line before it continues.
--vtk      both runs write -vtk series, and the job is killed once it has
           also written an output after its checkpoint (give
           -checkpoint_interval 2 so that there is a cycle's time for it);
           the whole run's .pvd after the restart must list the
           uninterrupted run's outputs: as many, the
           same cycles and times (to the comparison's tolerance), times
           increasing, no file twice, every file and piece present, each
           output's cells those of its cycle in the report."""
import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "postprocess"))
import report_ranks  # noqa: E402
import check_phases  # noqa: E402

# measured, not computed: they differ between any two runs
MEASURED = {"restarted", "weighed_imbalance_pct", "cycle_imbalance_pct", "next_imbalance_pct", "predicted_cycle_imbalance_pct", "decision_imbalance_pct", "proposed_imbalance_pct", "phases", "mpi_calls", "max_over_avg", "rank_load_measured", "fit_smape", "weights_measured", "rank_reaction_step_ns", "rank_ksp_time", "rank_ksp_cpu", "rank_peak_rss",
            # the reaction offload's plan follows each cell's measured clock
            "offload_moved", "offload_messages", "offload_plan_messages", "offload_bytes"}


# drawn anew by every run (its restarts keep it), or named by the report's
# file: differs between two runs; per_rank: the side file's, compared apart
DRAWN = {"run_id", "ranks_file", "per_rank"}


def measured(key):
    """Whether a record's field, or a side-file field (by the record's key
    of its path), is measured."""
    key = key.split(".")[0]
    return key.startswith("t_") or key.endswith("_s") or key.startswith("rank_time") or key in MEASURED or key in DRAWN


def run(cmd, log):
    with open(log, "w") as out:
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit("FAIL: %s exited with %d (log %s):\n%s" % (" ".join(cmd), rc, log, open(log).read()[-3000:]))


def sequence(manifest):
    try:
        m = re.search(r"^sequence (\d+)$", open(manifest).read(), re.M)
        return int(m.group(1)) if m else 0
    except OSError:
        return 0


def session(sid):
    """Live processes of session sid (Linux /proc): the launcher and its
    ranks, which MPI launchers put into process groups of their own.  A
    zombie is not counted: the killed launcher stays one until it is
    waited for, and the kill would go on sending it signals (100 rounds of
    10 ms, a second of every restart test)."""
    pids = []
    for d in os.listdir("/proc"):
        try:
            # the fields after the command's closing parenthesis: state ppid pgrp session
            f = open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split() if d.isdigit() else None
            if f and f[0] != "Z" and int(f[3]) == sid:
                pids.append(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return pids


def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def frozen(pids, timeout=2.0):
    """Wait until every process of pids is stopped (state T) or gone."""
    def state(pid):
        try:
            return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return "X"
    end = time.time() + timeout
    while time.time() < end and not all(state(pid) in "TtZX" for pid in pids):
        time.sleep(0.002)


def kill_after(cmd, manifest, ready, log):
    """Start cmd in a session of its own and SIGKILL every process of it,
    as a batch system ends a job, once ready(sequence of the manifest) is
    true; returns the sequence of the checkpoint left behind.  The job is
    stopped (SIGSTOP) before ready is asked again on the files as the kill
    leaves them: between one look and the kill a fast job can write its
    next checkpoint, and ready() may no longer hold for it."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        while proc.poll() is None:
            if ready(sequence(manifest)):
                pids = session(proc.pid)
                signal_all(pids, signal.SIGSTOP)
                frozen(pids)
                if not ready(sequence(manifest)):
                    signal_all(pids, signal.SIGCONT)
                    continue
                for _ in range(100):
                    pids = session(proc.pid)
                    if not pids:
                        break
                    signal_all(pids, signal.SIGKILL)
                    time.sleep(0.01)
                proc.wait()
                return sequence(manifest)
            time.sleep(0.002)
    sys.exit("FAIL: the run ended (status %s) before it could be killed as planned (log %s)" % (proc.returncode, log))


def fail_write(cmd, prefix, seq, piece, shim, log, report, ref):
    """Run cmd with the writes of checkpoint seq's piece failing (the
    manifest is written as P.manifest.new once per checkpoint, so its
    seq-1 earlier writes pass); the checkpoint before it must be left.
    The report (ref: the uninterrupted run's) fills halfway through the
    record of cycle seq - 1, written before checkpoint seq."""
    target = {"forest": "%s.%d.forest" % (prefix, seq), "state": "%s.%d.state" % (prefix, seq), "manifest": prefix + ".manifest.new", "report": report}[piece]
    spec = target + (":%d" % (seq - 1) if piece == "manifest" else "")
    env = dict(os.environ, LD_PRELOAD=" ".join(filter(None, (shim, os.environ.get("LD_PRELOAD")))), AMRDLB_FAIL_WRITE=spec)
    if piece == "report":
        lines = open(ref).read().splitlines(True)
        env["AMRDLB_FAIL_WRITE_AFTER"] = str(sum(len(line) for line in lines[: seq - 1]) + len(lines[seq - 1]) // 2)
    with open(log, "w") as out:
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    text = open(log).read()
    # Open MPI's own lines for a refused MPI-IO write ("mca_fbtl_posix_pwritev:
    # error in (p)write(v): ...") are lines beyond the one a failure gets
    errors = [line for line in text.splitlines() if "error:" in line or line.startswith("mca_")]
    if rc <= 0 or len(errors) != 1:
        sys.exit("FAIL: a failed write of %s: exit status %d and %d error lines, expected a non-zero status and one (log %s):\n%s" % (target, rc, len(errors), log, text[-3000:]))
    want = "error: option -report %s: cannot write: No space left on device (cut back to its last whole record)" % target if piece == "report" else "error: cannot write checkpoint file '%s': " % target
    if want not in errors[0]:
        sys.exit("FAIL: the error line does not name %s: %s" % (target, errors[0]))
    print("the failed write ended the run in one line: %s" % errors[0])
    if sequence(prefix + ".manifest") != seq - 1:
        sys.exit("FAIL: %s.manifest has sequence %d, expected %d (the last good checkpoint)" % (prefix, sequence(prefix + ".manifest"), seq - 1))


def whole_lines(path):
    """The report's records, every line a whole JSON object ended by its
    newline (the check a cut record fails)."""
    text = open(path).read()
    if text and not text.endswith("\n"):
        sys.exit("FAIL: %s ends in a cut record: %r" % (path, text[-80:]))
    try:
        return [json.loads(line) for line in text.splitlines()]
    except ValueError as e:
        sys.exit("FAIL: %s has a line that is not JSON (%s)" % (path, e))


def plant_leftover(prefix, seq):
    forest = "%s.%d.forest" % (prefix, seq)
    data = open(forest, "rb").read()
    open("%s.%d.forest" % (prefix, seq + 1), "wb").write(data[: len(data) // 2])
    text = open(prefix + ".manifest").read()
    open(prefix + ".manifest.new", "w").write(text[: len(text) // 2])


def records(path):
    return report_ranks.records(path)


def compare_blocks(before, report, got, first):
    """The restarted report's side file: the killed run's bytes up to the
    end of the block of cycle first - 1 (where the record of cycle first
    says its block starts), every later record's block where it says."""
    side = report + ".ranks"
    if got[first]["ranks_file"] is None:
        return []
    keep = got[first]["ranks_offset"]
    after = open(side, "rb").read()
    bad = []
    if first > 0 and keep != got[first - 1]["ranks_offset"] + int(report_ranks.block(side, got[first - 1]["ranks_offset"])[0]["bytes"]):
        bad.append("the block of cycle %d starts at %d, not where cycle %d's ends" % (first, keep, first - 1))
    if after[:keep] != before[:keep]:
        bad.append("%s: the blocks of cycles 0..%d (%d bytes) differ from the killed run's" % (side, first - 1, keep))
    ends = [r["ranks_offset"] + int(report_ranks.block(side, r["ranks_offset"])[0]["bytes"]) for r in got]
    if ends[-1] != len(after):
        bad.append("%s: %d bytes, its last block ends at %d" % (side, len(after), ends[-1]))
    print("side file: the killed run's %d bytes of cycles 0..%d kept, %d blocks after" % (keep, first - 1, len(got) - first))
    return bad


def close(a, b, rel):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def compare(ref, got, first, mode):
    bad = []
    if [r["cycle"] for r in got] != list(range(len(ref))):
        return ["cycles %s, the uninterrupted run has 0..%d" % ([r["cycle"] for r in got], len(ref) - 1)]
    # one run, whatever its restarts: one run id in every record
    if len({r.get("run_id") for r in got}) != 1:
        bad.append("run_id changes within the run: %s" % sorted({str(r.get("run_id")) for r in got}))
    for a, b in zip(ref, got):
        c = a["cycle"]
        if b["restarted"] != (c >= first):
            bad.append("cycle %d: restarted is %s" % (c, b["restarted"]))
        if mode == "exact":
            diff = [k for k in a if not measured(k) and a[k] != b.get(k)]
            diff += [k for k in a["per_rank"] if not measured(k) and (k not in b["per_rank"] or a["per_rank"][k].tobytes() != b["per_rank"][k].tobytes())]
            if diff:
                bad.append("cycle %d differs in %s" % (c, ", ".join("%s (%r, %r)" % (k, a.get(k, a["per_rank"].get(k)), b.get(k, b["per_rank"].get(k))) for k in diff[:4])))
            continue
        for k in ("cells", "dofs", "cells_type1", "cells_inert", "cells_reacting", "cells_reacted", "step"):
            if k in a and a[k] != b[k]:
                bad.append("cycle %d: %s %r, uninterrupted %r" % (c, k, b[k], a[k]))
        for k, rel in (("mass", 1e-9), ("mass_a", 1e-9), ("mass_b", 1e-9), ("mass_c", 1e-9), ("l2_error", 1e-6), ("h1_error", 1e-6), ("sim_time", 1e-9)):
            if k in a and not close(a[k], b[k], rel):
                bad.append("cycle %d: %s %r, uninterrupted %r (relative tolerance %g)" % (c, k, b[k], a[k], rel))
        for k in ("mass_balance_error", "mass_bc_error"):
            if k in b and not b[k] < 1e-12:
                bad.append("cycle %d: %s %g" % (c, k, b[k]))
    return bad


def pvd_entries(pvd):
    """(time, file) of every DataSet of a .pvd collection."""
    try:
        return [(float(d.get("timestep")), d.get("file")) for d in ET.parse(pvd).getroot().iter("DataSet")]
    except (OSError, ET.ParseError) as e:
        sys.exit("FAIL: %s cannot be read: %s" % (pvd, e))


def output_cells(pvtu):
    """Cells of one output, summed over its pieces' headers (raw appended
    data makes a piece no XML document); None when a file is missing."""
    if not os.path.isfile(pvtu):
        return None
    cells = 0
    for piece in ET.parse(pvtu).getroot().iter("Piece"):
        path = os.path.join(os.path.dirname(pvtu), piece.get("Source"))
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            m = re.search(rb'<Piece NumberOfPoints="\d+" NumberOfCells="(\d+)"', f.read(1 << 16))
        if not m:
            return None
        cells += int(m.group(1))
    return cells


def compare_series(ref_pvd, pvd, report, mode):
    """What is wrong with the restarted run's series against the
    uninterrupted run's."""
    ref, got = pvd_entries(ref_pvd), pvd_entries(pvd)
    bad = []
    times = [t for t, _ in got]
    files = [f for _, f in got]
    if any(b <= a for a, b in zip(times, times[1:])):
        bad.append("%s: times do not increase: %s" % (pvd, times))
    if len(set(files)) != len(files):
        bad.append("%s lists a file twice: %s" % (pvd, files))
    if len(got) != len(ref):
        bad.append("%s lists %d outputs, the uninterrupted run's %d" % (pvd, len(got), len(ref)))
    cells = {r["cycle"]: r["cells"] for r in report}
    for (rt, rf), (t, f) in zip(ref, got):
        if f.endswith("_init.pvtu") or rf.endswith("_init.pvtu"):
            # the initial state, written by the first run only
            if not (f.endswith("_init.pvtu") and rf.endswith("_init.pvtu") and t == rt == 0.0):
                bad.append("%s: output %s at time %r where the uninterrupted run has %s at %r" % (pvd, f, t, rf, rt))
            continue
        cycle = int(re.search(r"_(\d+)\.pvtu$", f).group(1))
        if re.search(r"_(\d+)\.pvtu$", rf).group(1) != "%04d" % cycle:
            bad.append("%s: output %s where the uninterrupted run has %s" % (pvd, f, rf))
        if not (t == rt if mode == "exact" else close(t, rt, 1e-9)):
            bad.append("%s: %s at time %r, the uninterrupted run's at %r" % (pvd, f, t, rt))
        n = output_cells(os.path.join(os.path.dirname(pvd), f))
        if n is None:
            bad.append("%s: %s or one of its pieces is missing or has no header" % (pvd, f))
        elif n != cells.get(cycle):
            bad.append("%s: %s has %d cells, cycle %d of the report %s" % (pvd, f, n, cycle, cells.get(cycle)))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True, help="launcher and its flags, one string")
    ap.add_argument("--exe", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--restart-ranks", type=int, required=True)
    ap.add_argument("--kill-at", type=int, default=2)
    ap.add_argument("--compare", choices=("exact", "conserved"), required=True)
    ap.add_argument("--leftover", action="store_true")
    ap.add_argument("--vtk", action="store_true")
    ap.add_argument("--fail-write", choices=("forest", "state", "manifest", "report"))
    ap.add_argument("--shim")
    ap.add_argument("options", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    opts = [o for o in a.options if o != "--"]
    launcher = a.mpiexec.split()
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    prefix = os.path.join(a.dir, "ck")

    def mpi(n):
        return launcher + ["-n", str(n), a.exe]

    ref_vtk, vtk = os.path.join(a.dir, "ref_vtk", "out"), os.path.join(a.dir, "vtk", "out")
    run(mpi(a.ranks) + opts + ["-report", os.path.join(a.dir, "ref.jsonl")] + (["-vtk", ref_vtk] if a.vtk else []), os.path.join(a.dir, "ref.log"))
    report = os.path.join(a.dir, "run.jsonl")
    # checkpoint S holds the state after cycle S*K-1 (-checkpoint_interval K)
    k = int(opts[opts.index("-checkpoint_interval") + 1]) if "-checkpoint_interval" in opts else 1

    def ready(s):
        # with --vtk, once the run also wrote an output after the checkpoint,
        # which the restart writes again (K > 1 leaves a cycle's time for it)
        return s >= a.kill_at and (not a.vtk or (os.path.exists(vtk + ".pvd") and len(pvd_entries(vtk + ".pvd")) > s * k))
    cmd = mpi(a.ranks) + opts + ["-checkpoint", prefix, "-report", report] + (["-vtk", vtk] if a.vtk else [])
    if a.fail_write:
        seq = a.kill_at - 1
        fail_write(cmd, prefix, a.kill_at, a.fail_write, a.shim, os.path.join(a.dir, "failed.log"), report, os.path.join(a.dir, "ref.jsonl"))
    else:
        seq = kill_after(cmd, prefix + ".manifest", ready, os.path.join(a.dir, "killed.log"))
    killed = whole_lines(report) if a.fail_write == "report" else records(report)
    if a.fail_write == "report":
        if [r["cycle"] for r in killed] != list(range(seq * k)):
            sys.exit("FAIL: the failed run's report has cycles %s, expected 0..%d" % ([r["cycle"] for r in killed], seq * k - 1))
        cut = open(os.path.join(a.dir, "ref.jsonl")).read().splitlines()[seq * k][:60]
        open(report, "a").write(cut)
        print("planted a cut record (%d bytes) at the report's end" % len(cut))
    print("%s on %d ranks after checkpoint %d, its report has cycles 0..%d" % ("failed" if a.fail_write else "killed", a.ranks, seq, len(killed) - 1))
    if a.vtk:
        n = len(pvd_entries(vtk + ".pvd"))
        print("the killed run's series lists %d outputs, %d after the checkpoint" % (n, n - seq * k))
        if n <= seq * k:
            sys.exit("FAIL: the run was killed before it wrote an output after checkpoint %d" % seq)
    if a.leftover:
        plant_leftover(prefix, seq)
        print("planted a half-written checkpoint %d" % (seq + 1))
    before = open(report + ".ranks", "rb").read()
    log = os.path.join(a.dir, "restart.log")
    run(mpi(a.restart_ranks) + ["-restart", prefix], log)
    m = re.search(r"restarted from checkpoint \S+ at cycle (\d+)", open(log).read())
    if not m:
        sys.exit("FAIL: no restart line in %s" % log)
    first = int(m.group(1))
    if a.fail_write == "report":
        said = [line for line in open(log).read().splitlines() if "its last record was cut" in line]
        if len(said) != 1:
            sys.exit("FAIL: the restart said %d times that it cut the report's last record, expected once (log %s)" % (len(said), log))
        print(said[0])
    ref, got = records(os.path.join(a.dir, "ref.jsonl")), whole_lines(report)
    for r in got:
        r["per_rank"] = report_ranks.of_record(r, report)
    print("restarted on %d ranks at cycle %d; %d cycles, uninterrupted %d" % (a.restart_ranks, first, len(got), len(ref)))
    if first != seq * k:
        sys.exit("FAIL: checkpoint %d continues at cycle %d, expected %d (a checkpoint every %d cycles)" % (seq, first, seq * k, k))
    bad = compare(ref, got, first, a.compare) + compare_blocks(before, report, got, first)
    # the summary's run totals cover the cycles before the checkpoint too
    said = open(log).read()
    if "summary: lost to imbalance" in said:
        bad += check_phases.check_summary(said, got)
    if a.vtk:
        bad += compare_series(ref_vtk + ".pvd", vtk + ".pvd", got, a.compare)
        print("the whole run's series lists %d outputs, the uninterrupted run's %d" % (len(pvd_entries(vtk + ".pvd")), len(pvd_entries(ref_vtk + ".pvd"))))
    last = got[-1]
    print("last cycle %d: %s" % (last["cycle"], ", ".join("%s %r" % (k, last[k]) for k in ("cells", "dofs", "mass", "h1_error", "step") if k in last)))
    if bad:
        sys.exit("FAIL:\n  " + "\n  ".join(bad))
    print("ok: %s comparison of %d cycles" % (a.compare, len(ref)))


if __name__ == "__main__":
    main()
