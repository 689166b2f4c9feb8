#!/usr/bin/env python3
"""One run per output path: a second run given the report, the trace or
the checkpoint prefix of a running one is refused in one line naming the
holder's host and pid, and runs once the first has ended.

  lock_check.py DIR MPIEXEC... AMR2D

DIR is emptied first.  The running first run is a real amr2d (its report
held); the trace and the checkpoint prefix are held the way it holds
them, an flock on PATH.lock with "host H pid P" in it."""
import fcntl
import os
import shutil
import subprocess
import sys
import time

d, launcher, amr = sys.argv[1], sys.argv[2:-1], sys.argv[-1]
shutil.rmtree(d, ignore_errors=True)
os.makedirs(d)
run = launcher + [amr, "-problem", "linear", "-amr_cycles", "2"]


def refused(extra, path, holder):
    p = subprocess.run(run + extra, capture_output=True, text=True, timeout=120)
    errors = [line for line in (p.stdout + p.stderr).splitlines() if "error:" in line]
    want = "in use by another run (%s, %s.lock)" % (holder, path)
    if p.returncode <= 0 or len(errors) != 1 or want not in errors[0]:
        sys.exit("FAIL: %s: exit %d, error lines %s; expected one naming '%s'" % (" ".join(extra), p.returncode, errors, want))
    print("refused: %s" % errors[0])


# a real first run, its report held while it runs
report = os.path.join(d, "first.jsonl")
first = subprocess.Popen(launcher + [amr, "-problem", "rotating-hill", "-t_final", "100", "-report", report], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
try:
    end = time.time() + 60
    while time.time() < end and not (os.path.exists(report) and os.path.getsize(report) > 0):
        time.sleep(0.05)
    text = open(report + ".lock").read().strip()
    if not text.startswith("host ") or " pid " not in text:
        sys.exit("FAIL: %s.lock holds '%s', not the host and pid of the run" % (report, text))
    refused(["-report", report], report, text)
    before = os.path.getsize(report)
finally:
    os.killpg(first.pid, 15)
    first.wait()
if os.path.getsize(report) < before:
    sys.exit("FAIL: the refused run cut the first run's report")

for option, name in (("-trace_loads", "run.trace"), ("-checkpoint", "ck")):
    path = os.path.join(d, name)
    with open(path + ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write("host otherhost pid 4242\n")
        f.flush()
        refused([option, path], path, "host otherhost pid 4242")
    # the holder gone (a killed run leaves its lock file, not its lock)
    p = subprocess.run(run + [option, path], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit("FAIL: %s %s after its holder ended: exit %d\n%s" % (option, path, p.returncode, (p.stdout + p.stderr)[-2000:]))
p = subprocess.run(run + ["-report", report], capture_output=True, text=True, timeout=120)
if p.returncode != 0:
    sys.exit("FAIL: -report %s after the first run was killed: exit %d" % (report, p.returncode))
print("lock check passed")
