#!/usr/bin/env python3
"""An interrupted run says where it stopped.

  interrupt_check.py --signal TERM|INT --dir DIR [--after N] -- COMMAND...

Starts COMMAND (amr2d/amr3d with -checkpoint DIR/ck -checkpoint_interval 1
-report DIR/run.jsonl appended) in a session of its own, sends the signal
to it once the report has more than N records (default 12: past cycle 10,
after which the human lines are only every 10th cycle's), and checks its
output: exactly one line 'interrupted after cycle C; checkpoint DIR/ck
continues the run at cycle K: -restart DIR/ck', C the last cycle of the
report, K the cycle DIR/ck.manifest's checkpoint continues at (C + 1, or
C when the signal came between the cycle's record and its checkpoint),
and a non-zero exit status."""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time


def records(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.endswith("\n")]
    except OSError:
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--signal", choices=["TERM", "INT"], required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--after", type=int, default=12)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    ck, report = os.path.join(a.dir, "ck"), os.path.join(a.dir, "run.jsonl")
    # mpiexec's SIGTERM to the ranks before its SIGKILL, which the test
    # environment sets to come at once: a second, which mpiexec waits out
    # whole, for ranks that end their cycle and checkpoint in milliseconds
    # (passed 3 of 3 beside two busy loops)
    env = dict(os.environ, OMPI_MCA_odls_base_sigkill_timeout="1")
    proc = subprocess.Popen(cmd + ["-checkpoint", ck, "-checkpoint_interval", "1", "-report", report], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, env=env)
    end = time.time() + 120
    while proc.poll() is None and len(records(report)) <= a.after and time.time() < end:
        time.sleep(0.01)
    if proc.poll() is not None:
        sys.exit("FAIL: the run ended (status %s) before %d cycles:\n%s" % (proc.returncode, a.after, proc.stdout.read()))
    proc.send_signal(getattr(signal, "SIG" + a.signal))
    out, _ = proc.communicate(timeout=60)
    lines = [l for l in out.splitlines() if "interrupted" in l]
    done = records(report)
    manifest = open(ck + ".manifest").read()
    print("".join(l + "\n" for l in lines), end="")
    if len(lines) != 1:
        sys.exit("FAIL: %d lines say the run was interrupted:\n%s" % (len(lines), out))
    m = re.search(r"interrupted after cycle (\d+); checkpoint (\S+) continues the run at cycle (\d+): -restart (\S+)$", lines[0])
    if not m or m.group(2) != ck or m.group(4) != ck:
        sys.exit("FAIL: not the line expected: %s" % lines[0])
    c, k = int(m.group(1)), int(m.group(3))
    if c != done[-1]["cycle"]:
        sys.exit("FAIL: the line names cycle %d, the report's last is %d" % (c, done[-1]["cycle"]))
    if k not in (c, c + 1) or "sequence %d\n" % k not in manifest:
        sys.exit("FAIL: checkpoint continuing at cycle %d after cycle %d (manifest: %s)" % (k, c, manifest.splitlines()[:3]))
    if proc.returncode == 0:
        sys.exit("FAIL: exit status 0 after SIG%s" % a.signal)
    print("interrupt check passed: SIG%s after cycle %d, checkpoint at cycle %d, exit status %d" % (a.signal, c, k, proc.returncode))


if __name__ == "__main__":
    main()
