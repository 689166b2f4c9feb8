#!/usr/bin/env python3
"""Kill a run of amr2d/amr3d with SIGKILL after it wrote a checkpoint,
restart it (possibly on another number of ranks) and compare the whole
run's report with an uninterrupted run's.

  restart_check.py --mpiexec CMD... --exe AMR --dir DIR --ranks N --restart-ranks M
                   --kill-at SEQ --compare exact|conserved [--leftover] -- OPTIONS...

exact:     every record field but the measured times equal, bit for bit
           (same rank count, count or model weights);
conserved: cells, dofs, load types and steps equal, mass and errors to the
           solver's tolerance, the mass balance to round-off.
--leftover plants what a writer killed halfway through the next checkpoint
leaves (a truncated forest file of the next sequence and a truncated
P.manifest.new) before the restart, which must use the previous one."""
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

# measured, not computed: they differ between any two runs
MEASURED = {"restarted", "imbalance_pct", "max_over_avg", "rank_load_measured", "fit_smape"}


def measured(key):
    return key.startswith("t_") or key.endswith("_s") or key.startswith("rank_time") or key in MEASURED


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
    """Processes of session sid (Linux /proc): the launcher and its ranks,
    which MPI launchers put into process groups of their own."""
    pids = []
    for d in os.listdir("/proc"):
        try:
            # the fields after the command's closing parenthesis: state ppid pgrp session
            if d.isdigit() and int(open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()[3]) == sid:
                pids.append(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return pids


def kill_after(cmd, manifest, seq, log):
    """Start cmd in a session of its own and SIGKILL every process of it,
    as a batch system ends a job, once manifest names sequence seq or
    later; returns the sequence of the checkpoint left behind."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        while proc.poll() is None:
            if sequence(manifest) >= seq:
                for _ in range(100):
                    pids = session(proc.pid)
                    if not pids:
                        break
                    for pid in pids:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                    time.sleep(0.01)
                proc.wait()
                return sequence(manifest)
            time.sleep(0.002)
    sys.exit("FAIL: the run ended (status %s) before checkpoint %d was written (log %s)" % (proc.returncode, seq, log))


def plant_leftover(prefix, seq):
    forest = "%s.%d.forest" % (prefix, seq)
    data = open(forest, "rb").read()
    open("%s.%d.forest" % (prefix, seq + 1), "wb").write(data[: len(data) // 2])
    text = open(prefix + ".manifest").read()
    open(prefix + ".manifest.new", "w").write(text[: len(text) // 2])


def records(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def close(a, b, rel):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def compare(ref, got, first, mode):
    bad = []
    if [r["cycle"] for r in got] != list(range(len(ref))):
        return ["cycles %s, the uninterrupted run has 0..%d" % ([r["cycle"] for r in got], len(ref) - 1)]
    for a, b in zip(ref, got):
        c = a["cycle"]
        if b["restarted"] != (c >= first):
            bad.append("cycle %d: restarted is %s" % (c, b["restarted"]))
        if mode == "exact":
            diff = [k for k in a if not measured(k) and a[k] != b.get(k)]
            if diff:
                bad.append("cycle %d differs in %s" % (c, ", ".join("%s (%r, %r)" % (k, a[k], b.get(k)) for k in diff[:4])))
            continue
        for k in ("cells", "dofs", "cells_type1", "step"):
            if k in a and a[k] != b[k]:
                bad.append("cycle %d: %s %r, uninterrupted %r" % (c, k, b[k], a[k]))
        for k, rel in (("mass", 1e-9), ("l2_error", 1e-6), ("h1_error", 1e-6), ("sim_time", 1e-9)):
            if k in a and not close(a[k], b[k], rel):
                bad.append("cycle %d: %s %r, uninterrupted %r (relative tolerance %g)" % (c, k, b[k], a[k], rel))
        if "mass_balance_error" in b and not b["mass_balance_error"] < 1e-12:
            bad.append("cycle %d: mass balance error %g" % (c, b["mass_balance_error"]))
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
    ap.add_argument("options", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    opts = [o for o in a.options if o != "--"]
    launcher = a.mpiexec.split()
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    prefix = os.path.join(a.dir, "ck")

    def mpi(n):
        return launcher + ["-n", str(n), a.exe]

    run(mpi(a.ranks) + opts + ["-report", os.path.join(a.dir, "ref.jsonl")], os.path.join(a.dir, "ref.log"))
    report = os.path.join(a.dir, "run.jsonl")
    seq = kill_after(mpi(a.ranks) + opts + ["-checkpoint", prefix, "-report", report], prefix + ".manifest", a.kill_at,
                     os.path.join(a.dir, "killed.log"))
    killed = records(report)
    print("killed on %d ranks after checkpoint %d, its report has cycles 0..%d" % (a.ranks, seq, len(killed) - 1))
    if a.leftover:
        plant_leftover(prefix, seq)
        print("planted a half-written checkpoint %d" % (seq + 1))
    log = os.path.join(a.dir, "restart.log")
    run(mpi(a.restart_ranks) + ["-restart", prefix], log)
    m = re.search(r"restarted from checkpoint \S+ at cycle (\d+)", open(log).read())
    if not m:
        sys.exit("FAIL: no restart line in %s" % log)
    first = int(m.group(1))
    ref, got = records(os.path.join(a.dir, "ref.jsonl")), records(report)
    print("restarted on %d ranks at cycle %d; %d cycles, uninterrupted %d" % (a.restart_ranks, first, len(got), len(ref)))
    if first != seq:
        sys.exit("FAIL: checkpoint %d continues at cycle %d, expected %d (one checkpoint per cycle)" % (seq, first, seq))
    bad = compare(ref, got, first, a.compare)
    last = got[-1]
    print("last cycle %d: %s" % (last["cycle"], ", ".join("%s %r" % (k, last[k]) for k in ("cells", "dofs", "mass", "h1_error", "step") if k in last)))
    if bad:
        sys.exit("FAIL:\n  " + "\n  ".join(bad))
    print("ok: %s comparison of %d cycles" % (a.compare, len(ref)))


if __name__ == "__main__":
    main()
