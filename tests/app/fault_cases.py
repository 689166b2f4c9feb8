#!/usr/bin/env python3
"""The fault and bad-input cases of issues 28 (41) and 43 (20), run against one build,
one markdown table row per case: its exit status and lines on stderr on
1 and on 2 ranks, and its outcome by the issue's rule.

  fault_cases.py BUILD [--shim LIB] [--work DIR] [--ranks 1,2] [--only NAME,...] [--check]

Run from the top of the repository (the meshes and test inputs are read
from there).  BUILD is a build folder (BUILD/bin/amr2d, amr3d, lbbench);
LIB the write-failure shim (tests/failwrite.c; default
BUILD/tests/libfailwrite.so: give this tree's to run an older build).
--check: exit 1 when a case fails.

The rule: a bad input or a fault ends in a clean non-zero exit (no signal,
no hang: each run has a time limit) with exactly one line on stderr
(Open MPI's launcher's own report of the non-zero exit, the block between
its lines of dashes, is not counted), and nothing is lost: where a
checkpoint was written, the previous one restarts and the report ends in
whole records.  The cases that must run (a record cut at the report's end,
a kill -9, a stale OMPIO semaphore) exit 0, with whole records, the cycles
all there, the checkpoints written.  Issue 43's add: a refused restart
leaves another run's report or trace byte for byte as it was, and an
edited checkpoint leaves the report as it was.""" 
import argparse
import concurrent.futures
import fcntl
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from trace_check import CYCLE, read_trace  # noqa: E402

LIMIT = 60  # seconds a run may take: beyond it, a hang
LSHAPE = ["-problem", "lshape", "-mesh", "meshes/lshape.inp", "-amr_min_level", "2"]


class Ctx:
    def __init__(self, a, np):
        self.bin = os.path.join(os.path.abspath(a.build), "bin")
        self.shim = a.shim
        self.np = np
        self.dir = os.path.abspath(os.path.join(a.work, "np%d" % np))
        self.mpiexec = a.mpiexec.split()

    def cmd(self, exe, args, np=None):
        np = np or self.np
        path = os.path.join(self.bin, exe)
        # one rank: the program alone, an MPI singleton, as the tests run it
        return ([path] if np == 1 else self.mpiexec + ["-n", str(np), path]) + list(args)

    def fresh(self, name):
        d = os.path.join(self.dir, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d


def stderr_lines(err):
    """The lines on stderr less the launcher's block of dashes."""
    out, inside = [], False
    for line in err.splitlines():
        if re.fullmatch(r"-{20,}", line.strip()):
            inside = not inside
            continue
        if not inside and line.strip():
            out.append(line)
    return out


def run(c, exe, args, env=None, cwd=None, limit=LIMIT):
    """(exit status, stderr lines, stdout): a signal is 128 + its number,
    a hang 'hang'."""
    e = dict(os.environ, **(env or {}))
    p = subprocess.Popen(c.cmd(exe, args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e, cwd=cwd, start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return "hang", stderr_lines(err), out
    rc = p.returncode if p.returncode >= 0 else 128 - p.returncode
    return rc, stderr_lines(err), out


def refused(r, why="", names=None):
    """The rule for a bad input: a clean non-zero exit and one line (which
    names the bad value as given, names, where one is set)."""
    rc, lines, _ = r
    ok = rc != "hang" and 0 < rc < 128 and len(lines) == 1
    if ok and names and names not in lines[0]:
        ok, why = False, "the line does not name %s: %s" % (names, lines[0][:80])
    said = ": " + lines[0][:80] if lines else ""
    if ok or why:
        # the line itself: the reader judges what it says
        return rc, len(lines), ok, why or lines[0][:100]
    if rc == "hang":
        why = "no end within the time limit"
    elif rc >= 128:
        why = "killed by signal %d" % (rc - 128)
    elif rc == 0:
        why = "exit 0, accepted" + said
    else:
        why = "%d lines%s" % (len(lines), said)
    return rc, len(lines), ok, why


def shim_env(c, target, skip=None, after=None):
    env = {"LD_PRELOAD": " ".join(filter(None, (c.shim, os.environ.get("LD_PRELOAD")))), "AMRDLB_FAIL_WRITE": target + ("" if skip is None else ":%d" % skip)}
    if after is not None:
        env["AMRDLB_FAIL_WRITE_AFTER"] = str(after)
    return env


def sequence(prefix):
    try:
        return int(re.search(r"^sequence (\d+)$", open(prefix + ".manifest").read(), re.M).group(1))
    except (OSError, AttributeError):
        return -1


def whole_records(path):
    """The report's cycle numbers, or None when a line is cut or no JSON."""
    try:
        text = open(path).read()
        if text and not text.endswith("\n"):
            return None
        return [json.loads(line)["cycle"] for line in text.splitlines()]
    except (OSError, ValueError, KeyError):
        return None


def restarts(c, prefix, extra=()):
    """The previous checkpoint continues: the restart exits 0."""
    rc, lines, out = run(c, "amr2d", ["-restart", prefix] + list(extra))
    return rc == 0


# ------------------------------------------------------------ the cases


def checkpoint_piece(piece):
    def case(c):
        d = c.fresh("ck_" + piece)
        ck = os.path.join(d, "ck")
        target = {"forest": ck + ".3.forest", "state": ck + ".3.state", "ranks": ck + ".3.ranks", "manifest": ck + ".manifest.new"}[piece]
        r = run(c, "amr2d", LSHAPE + ["-amr_cycles", "5", "-checkpoint", ck], shim_env(c, target, 2 if piece == "manifest" else None))
        kept = sequence(ck) == 2 and restarts(c, ck)
        rc, n, ok, why = refused(r)
        return rc, n, ok and kept, why if kept else "checkpoint 2 not left to restart (sequence %d); %s" % (sequence(ck), why)
    return case


def forest_dev_full(c):
    d = c.fresh("ck_devfull")
    ck = os.path.join(d, "ck")
    os.symlink("/dev/full", ck + ".2.forest")
    r = run(c, "amr2d", LSHAPE + ["-amr_cycles", "4", "-checkpoint", ck])
    os.unlink(ck + ".2.forest")
    kept = sequence(ck) == 1 and restarts(c, ck)
    rc, n, ok, why = refused(r)
    return rc, n, ok and kept, why if kept else "checkpoint 1 not left to restart"


def report_fills(c):
    d = c.fresh("report_fills")
    ref, rep, ck = os.path.join(d, "ref.jsonl"), os.path.join(d, "run.jsonl"), os.path.join(d, "ck")
    run(c, "amr2d", LSHAPE + ["-amr_cycles", "5", "-report", ref])
    lines = open(ref).read().splitlines(True)
    # the disk fills halfway through the record of cycle 2
    after = len(lines[0]) + len(lines[1]) + len(lines[2]) // 2
    r = run(c, "amr2d", LSHAPE + ["-amr_cycles", "5", "-report", rep, "-checkpoint", ck], shim_env(c, rep, after=after))
    first = whole_records(rep)
    good = first == [0, 1] and restarts(c, ck) and whole_records(rep) == [0, 1, 2, 3, 4]
    rc, n, ok, why = refused(r)
    return rc, n, ok and good, why if good else "report after the failure %s, after the restart %s" % (first, whole_records(rep))


def trace_fills(c):
    d = c.fresh("trace_fills")
    ref, tr, ck = os.path.join(d, "ref.trace"), os.path.join(d, "run.trace"), os.path.join(d, "ck")
    run(c, "amr2d", LSHAPE + ["-amr_cycles", "5", "-trace_loads", ref])
    recs = read_trace(ref)
    after = recs[2]["at"] + recs[2]["bytes"] // 2
    r = run(c, "amr2d", LSHAPE + ["-amr_cycles", "5", "-trace_loads", tr, "-checkpoint", ck], shim_env(c, tr, after=after))
    good = restarts(c, ck)
    try:
        good = good and len(read_trace(tr)) == len(recs)
    except (AssertionError, OSError, Exception):
        good = False
    rc, n, ok, why = refused(r)
    return rc, n, ok and good, why if good else "the restart did not leave a whole trace"


def device_full(option, extra=()):
    def case(c):
        return refused(run(c, "amr2d", ["-problem", "linear", "-amr_cycles", "2", option, "/dev/full"] + list(extra)))
    return case


def vtk_full(c):
    d = c.fresh("vtk_full")
    os.makedirs(os.path.join(d, "o_0000"))
    os.symlink("/dev/full", os.path.join(d, "o_0000", "o_0000_0000.vtu"))
    return refused(run(c, "amr2d", ["-problem", "linear", "-amr_cycles", "1", "-vtk", os.path.join(d, "o")]))


def finished_run(c, name, extra):
    d = c.fresh(name)
    ck, rep, tr = os.path.join(d, "ck"), os.path.join(d, "run.jsonl"), os.path.join(d, "run.trace")
    run(c, "amr2d", LSHAPE + ["-amr_cycles", "4", "-checkpoint", ck, "-report", rep, "-trace_loads", tr] + list(extra))
    return ck, rep, tr


def trace_damaged(how):
    def case(c):
        ck, rep, tr = finished_run(c, "trace_" + how, [])
        if how == "deleted":
            os.unlink(tr)
        else:
            os.truncate(tr, os.path.getsize(tr) // 2)
        return refused(run(c, "amr2d", ["-restart", ck, "-amr_cycles", "6"]))
    return case


def report_cut_before(c):
    ck, rep, tr = finished_run(c, "report_cut", [])
    text = open(rep).read()
    open(rep, "w").write(text[: text.index("\n") + 40])
    return refused(run(c, "amr2d", ["-restart", ck, "-amr_cycles", "6"]))


def report_partial_end(c):
    """Must run: the cut record after the checkpoint cut back, said once."""
    ck, rep, tr = finished_run(c, "report_partial", [])
    open(rep, "a").write(open(rep).read().splitlines()[-1][:60])
    rc, lines, out = run(c, "amr2d", ["-restart", ck, "-amr_cycles", "6"])
    said = [line for line in (out.splitlines() + lines) if "cut" in line and "-report" in line]
    cycles = whole_records(rep)
    ok = rc == 0 and len(lines) == 0 and len(said) == 1 and cycles == list(range(6))
    return rc, len(lines), ok, "cut back in one line" if ok else "report cycles %s, %d lines said so" % (cycles, len(said))


def two_runs(option, name):
    """A second run given a running one's output path is refused."""
    def case(c):
        d = c.fresh("two_" + name)
        path, first_report = os.path.join(d, name), os.path.join(d, "first.jsonl")
        args = ["-problem", "rotating-hill", "-t_final", "100", "-report", first_report]
        if option != "-report":
            args += [option, path]
        else:
            first_report = path
            args[-1] = path
        first = subprocess.Popen(c.cmd("amr2d", args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            end = time.time() + LIMIT
            while time.time() < end and not (os.path.exists(first_report) and os.path.getsize(first_report) > 0):
                time.sleep(0.05)
            r = run(c, "amr2d", ["-problem", "linear", "-amr_cycles", "2", option, path])
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
        return refused(r)
    return case


def bad(exe, args, env=None, cwd=None, limit=LIMIT, names=None):
    def case(c):
        return refused(run(c, exe, args, env, cwd, limit), names=names)
    return case


def petscrc_self(c):
    d = c.fresh("petscrc")
    open(os.path.join(d, ".petscrc"), "w").write("-options_file .petscrc\n")
    return refused(run(c, "amr2d", ["-problem", "lshape", "-mesh", os.path.abspath("meshes/lshape.inp")], cwd=d))


def contrast_1e20(c):
    d = c.fresh("contrast")
    f = os.path.join(d, "contrast20.txt")
    open(f, "w").write("2 2\n1 1e20\n1e20 1\n")
    return refused(run(c, "amr2d", ["-problem", "darcy-transport", "-t_final", "0.01", "-darcy_permeability", "file:" + f]))


def nan_centre(c):
    d = c.fresh("nan_trace")
    tr = os.path.join(d, "run.trace")
    run(c, "amr2d", ["-problem", "linear", "-amr_min_level", "3", "-amr_cycles", "3", "-trace_loads", tr], limit=LIMIT)
    recs = read_trace(tr)
    data = open(tr, "rb").read()
    x0 = recs[-1]["at"] + CYCLE.size + 24 * recs[-1]["P"] + 9
    import struct
    open(tr, "wb").write(data[:x0] + struct.pack("<f", float("nan")) + data[x0 + 4:])
    return refused(run(c, "lbbench", ["-virtual", "-tasks", "trace", "-graph", "mesh2d:2x2", "-scenario", "trace:%s:%d" % (tr, recs[-1]["cycle"]),
                                      "-lb_method", "diffusion", "-lb_target", "0.99"]), names="nan")


def kill9(c):
    """Must run: killed after a checkpoint, the restart completes the report."""
    d = c.fresh("kill9")
    ck, rep = os.path.join(d, "ck"), os.path.join(d, "run.jsonl")
    # 9 cycles: the last ones take seconds, time to kill after checkpoint 2
    p = subprocess.Popen(c.cmd("amr2d", LSHAPE + ["-amr_cycles", "9", "-checkpoint", ck, "-report", rep]), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    end = time.time() + LIMIT
    while time.time() < end and sequence(ck) < 2 and p.poll() is None:
        time.sleep(0.002)
    if p.poll() is not None:
        return p.returncode, 0, False, "the run ended before it could be killed"
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    # the launcher gone, its ranks may live a moment longer, holding the locks
    for lock in (ck + ".lock", rep + ".lock"):
        with open(lock, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
    rc, lines, out = run(c, "amr2d", ["-restart", ck])
    cycles = whole_records(rep)
    ok = rc == 0 and len(lines) == 0 and cycles == list(range(9))
    return rc, len(lines), ok, "restarted, report whole" if ok else "report cycles %s" % cycles


# ------------------------------------------------ the cases of issue 43

FIFO_LIMIT = 15  # a FIFO without a reader hangs at once or never


def md5(path):
    import hashlib
    return hashlib.md5(open(path, "rb").read()).hexdigest()


def other_runs_output(option):
    """A restart beside another run's report or trace: refused in one line
    naming the file, the other run's file byte for byte the same, the
    checkpoint restartable with its own outputs elsewhere."""
    def case(c):
        d = c.fresh("other_run" + option)
        ck, out = os.path.join(d, "ckA"), os.path.join(d, "out")
        run(c, "amr2d", LSHAPE + ["-amr_cycles", "3", "-checkpoint", ck, option, out])
        run(c, "amr2d", LSHAPE + ["-amr_max_level", "6", "-amr_cycles", "5", option, out])
        before = md5(out)
        r = run(c, "amr2d", ["-restart", ck, "-amr_cycles", "5"])
        kept = md5(out) == before
        again = restarts(c, ck, ["-amr_cycles", "5", option, os.path.join(d, "own")])
        rc, n, ok, why = refused(r, names=out)
        return rc, n, ok and kept and again, why if kept and again else "the other run's file changed (%s) or the checkpoint did not restart (%s)" % (not kept, not again)
    return case


def fifo_output(option, extra=()):
    def case(c):
        d = c.fresh("fifo" + option)
        f = os.path.join(d, "f")
        os.mkfifo(f)
        return refused(run(c, "amr2d", ["-problem", "linear", "-amr_cycles", "2", option, f] + list(extra), limit=FIFO_LIMIT), names=f)
    return case


def fifo_in_place(what):
    """A FIFO where a checkpoint's manifest or a VTK piece goes."""
    def case(c):
        d = c.fresh("fifo_" + what)
        if what == "restart":
            os.mkfifo(os.path.join(d, "ck.manifest"))
            args, name = ["-problem", "lshape", "-restart", os.path.join(d, "ck")], "ck.manifest"
        elif what == "checkpoint":
            os.mkfifo(os.path.join(d, "ck.manifest"))
            args, name = LSHAPE + ["-amr_cycles", "2", "-checkpoint", os.path.join(d, "ck")], "ck.manifest"
        else:
            os.makedirs(os.path.join(d, "o_0000"))
            os.mkfifo(os.path.join(d, "o_0000", "o_0000_0000.vtu"))
            args, name = ["-problem", "linear", "-amr_cycles", "1", "-vtk", os.path.join(d, "o")], "o_0000/o_0000_0000.vtu"
        return refused(run(c, "amr2d", args, limit=FIFO_LIMIT), names=name)
    return case


def fifo_bench(option, spec):
    def case(c):
        d = c.fresh("fifo_bench_" + spec)
        f = os.path.join(d, "f")
        os.mkfifo(f)
        args = {"trace": ["-chain", "-graph", "line:2", "-scenario", "trace:" + f, "-lb_method", "sfc"],
                "graph": ["-graph", "file:" + f, "-scenario", "point", "-lb_method", "diffusion"],
                "file": ["-tasks", "-graph", "mesh3d:2x2x2", "-scenario", "file:" + f, "-lb_method", "diffusion"]}[spec]
        return refused(run(c, "lbbench", ["-virtual"] + args, limit=FIFO_LIMIT), names=f)
    return case


def stale_semaphore(c):
    """Must run: a stale OMPIO semaphore at 0 of the forest's name (as a
    kill leaves it) does not hang the checkpoint's write."""
    import ctypes
    d = c.fresh("semaphore")
    base = "fcsem%d_%d_ck" % (os.getpid(), c.np)
    ck = os.path.join(d, base)
    names = ["OMPIO_%s.%d.forest" % (base, s) for s in (1, 2)]
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.sem_open.restype = ctypes.c_void_p
    libc.sem_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
    try:
        for name in names:
            sem = libc.sem_open(("/" + name).encode(), os.O_CREAT | os.O_EXCL, 0o644, 0)
            if sem in (None, ctypes.c_void_p(-1).value):
                return "-", 0, False, "cannot plant semaphore %s: %s" % (name, os.strerror(ctypes.get_errno()))
            libc.sem_close(ctypes.c_void_p(sem))
        rc, lines, out = run(c, "amr2d", LSHAPE + ["-amr_cycles", "3", "-checkpoint", ck], limit=30)
    finally:
        for name in names:
            if os.path.exists("/dev/shm/sem." + name):
                os.unlink("/dev/shm/sem." + name)
    ok = rc == 0 and len(lines) == 0 and sequence(ck) == 2 and restarts(c, ck, ["-amr_cycles", "4"])
    return rc, len(lines), ok, "checkpoints written, restarted" if ok else "checkpoint sequence %d" % sequence(ck)


def edited_state(name, value, rank=None):
    """A checkpoint whose state (or rank's own part of it) says what the
    forest contradicts, its checksums matching: refused in one line naming
    the entry, the report kept as it is, no crash."""
    def case(c):
        import importlib
        sys.path.insert(0, HERE)
        ckp_edit = importlib.import_module("ckp_edit")
        ck, rep, tr = finished_run(c, "edited_" + name, [])
        ckp_edit.edit(ck, name, value, rank)
        before = md5(rep)
        r = run(c, "amr2d", ["-restart", ck, "-amr_cycles", "6"])
        kept = md5(rep) == before
        rc, n, ok, why = refused(r, names=name)
        return rc, n, ok and kept, why if kept else "the report changed"
    return case


def folder_manifest(restart):
    def case(c):
        d = c.fresh("folder_manifest_%d" % restart)
        ck = os.path.join(d, "ck", "a")
        os.makedirs(ck + ".manifest")
        args = ["-problem", "lshape", "-restart", ck] if restart else LSHAPE + ["-amr_cycles", "2", "-checkpoint", ck]
        return refused(run(c, "amr2d", args), names="a.manifest")
    return case


def long_path(c):
    """A path of 5000 characters: the line keeps the reason after it."""
    d = c.fresh("long_path")
    path = os.path.join(d, "/".join(["x" * 240] * 20), "r.jsonl")
    r = run(c, "amr2d", ["-problem", "linear", "-amr_cycles", "1", "-report", path])
    shutil.rmtree(os.path.join(d, "x" * 240), ignore_errors=True)
    rc, n, ok, why = refused(r, names="-report")
    if ok and not r[1][0].rstrip().endswith("File name too long"):
        ok, why = False, "the reason is cut: ..." + r[1][0][-60:]
    return rc, n, ok, why


CASES = [
    ("forest write fails (ENOSPC)", checkpoint_piece("forest")),
    ("state write fails (ENOSPC)", checkpoint_piece("state")),
    ("ranks write fails (ENOSPC)", checkpoint_piece("ranks")),
    ("manifest write fails (ENOSPC)", checkpoint_piece("manifest")),
    ("forest path is /dev/full", forest_dev_full),
    ("report: disk fills mid-record", report_fills),
    ("trace: disk fills mid-record", trace_fills),
    ("-report /dev/full", device_full("-report")),
    ("-trace_loads /dev/full", device_full("-trace_loads")),
    ("-vtk output is /dev/full", vtk_full),
    ("restart: trace deleted", trace_damaged("deleted")),
    ("restart: trace truncated", trace_damaged("truncated")),
    ("restart: report cut before the checkpoint", report_cut_before),
    ("restart: report ends in a cut record (must run)", report_partial_end),
    ("two runs, one -report", two_runs("-report", "r.jsonl")),
    ("two runs, one -checkpoint", two_runs("-checkpoint", "ck")),
    ("two runs, one -trace_loads", two_runs("-trace_loads", "t.trace")),
    ("options file includes itself", bad("amr2d", ["-options_file", "tests/app/opts/self.opts"])),
    ("two options files include each other", bad("amr2d", ["-options_file", "tests/app/opts/loop_a.opts"])),
    ("-options_file /dev/zero", bad("amr2d", ["-options_file", "/dev/zero"])),
    ("-options_file missing", bad("amr2d", ["-options_file", "tests/app/opts/none.opts"])),
    ("trailing -options_file", bad("amr2d", ["-problem", "lshape", "-options_file"])),
    ("lbbench -options_file /dev/zero", bad("lbbench", ["-options_file", "/dev/zero"])),
    ("PETSC_OPTIONS includes a self-including file", bad("amr2d", ["-problem", "lshape"], {"PETSC_OPTIONS": "-options_file tests/app/opts/self.opts"})),
    ("./.petscrc includes itself", petscrc_self),
    ("-amr_min_level 4294967300", bad("amr2d", ["-problem", "lshape", "-amr_min_level", "4294967300"])),
    ("-amr_max_level 99999999999", bad("amr2d", ["-problem", "lshape", "-amr_max_level", "99999999999"], names="99999999999")),
    ("lbbench -chain 4294967300", bad("lbbench", ["-virtual", "-graph", "line:4", "-scenario", "point:0:16", "-lb_method", "sfc", "-chain", "4294967300"],
                                      names="4294967300")),
    ("-adv_load_threshold nan", bad("amr2d", ["-problem", "rotating-hill", "-adv_load_threshold", "nan"])),
    ("-adv_load_threshold inf", bad("amr2d", ["-problem", "rotating-hill", "-adv_load_threshold", "inf"])),
    ("-adv_load_threshold 2", bad("amr2d", ["-problem", "rotating-hill", "-adv_load_threshold", "2"])),
    ("-amr_refine_tol nan", bad("amr2d", ["-problem", "sine", "-amr_strategy", "threshold", "-amr_refine_tol", "nan"])),
    ("-amr_coarsen_tol nan", bad("amr2d", ["-problem", "sine", "-amr_strategy", "threshold", "-amr_coarsen_tol", "nan"])),
    ("-t_final inf", bad("amr2d", ["-problem", "rotating-hill", "-t_final", "inf"], limit=15)),
    ("-t_final ''", bad("amr2d", ["-problem", "rotating-hill", "-t_final", ""])),
    ("trailing -t_final", bad("amr2d", ["-problem", "rotating-hill", "-t_final"])),
    ("mesh: two nodes at one point (slit)", bad("amr2d", ["-problem", "lshape", "-mesh", "tests/mesh/bad/slit.inp"])),
    ("permeability contrast 1e12", bad("amr2d", ["-problem", "darcy-transport", "-t_final", "0.01", "-darcy_permeability", "file:tests/fem/permeability/contrast12.txt"])),
    ("permeability contrast 1e20", contrast_1e20),
    ("trace: NaN cell centre (task mode)", nan_centre),
    ("kill -9 after a checkpoint, restart (must run)", kill9),
    # issue 43
    ("restart beside another run's report", other_runs_output("-report")),
    ("restart beside another run's trace", other_runs_output("-trace_loads")),
    ("-report is a FIFO", fifo_output("-report")),
    ("-trace_loads is a FIFO", fifo_output("-trace_loads")),
    ("restart: CK.manifest is a FIFO", fifo_in_place("restart")),
    ("-checkpoint: CK.manifest is a FIFO", fifo_in_place("checkpoint")),
    ("-vtk piece is a FIFO", fifo_in_place("vtk")),
    ("lbbench -scenario trace:FIFO", fifo_bench("-scenario", "trace")),
    ("lbbench -graph file:FIFO", fifo_bench("-graph", "graph")),
    ("lbbench -scenario file:FIFO", fifo_bench("-scenario", "file")),
    ("stale OMPIO semaphore at 0 (must run)", stale_semaphore),
    ("restart: cycle.cells off the forest's sum", edited_state("cycle.cells", [5], 0)),
    ("restart: cycle.next 2^40", edited_state("cycle.next", [1 << 40])),
    ("restart: cycle.next -5", edited_state("cycle.next", [-5])),
    ("-checkpoint: ck/a.manifest is a folder", folder_manifest(False)),
    ("-restart: ck/a.manifest is a folder", folder_manifest(True)),
    ("-lb_window 2147483647 -lb_weights timing", bad("amr2d", ["-problem", "darcy-transport", "-amr_min_level", "3", "-t_final", "0.01", "-lb_window", "2147483647",
                                                             "-lb_weights", "timing"], names="-lb_window")),
    ("-lb_cost 1e308,1e308", bad("amr2d", ["-problem", "darcy-transport", "-amr_min_level", "3", "-t_final", "0.01", "-lb_weights", "model", "-lb_cost", "1e308,1e308"],
                                 names="-lb_cost")),
    ("a 5000-character -report path", long_path),
    ("lbbench -base 1e308", bad("lbbench", ["-virtual", "-graph", "line:4", "-scenario", "point", "-lb_method", "diffusion", "-lb_max_iters", "100", "-base", "1e308"],
                                names="-base")),
    # stop 52: the cycles' wall time the summary's last line splits off (-1.0)
    ("restart: lb.cycles_wall -1", edited_state("lb.cycles_wall", [struct.unpack("<q", struct.pack("<d", -1.0))[0]])),
]


def attempt(case, c):
    """A case's outcome on c's ranks; one that cannot even be set up fails."""
    try:
        return case(c)
    except Exception as e:
        return ("-", 0, False, "%s: %s" % (type(e).__name__, str(e)[:80]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--shim")
    ap.add_argument("--work", default=None)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--only", default="")
    ap.add_argument("--mpiexec", default="mpiexec --oversubscribe")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    a.shim = os.path.abspath(a.shim or os.path.join(a.build, "tests", "libfailwrite.so"))
    if not os.path.exists(a.shim):
        sys.exit("no write-failure shim %s: give --shim" % a.shim)
    a.work = a.work or os.path.join(os.path.abspath(a.build), "fault_cases")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    ranks = [int(r) for r in a.ranks.split(",")]
    only = [s for s in a.only.split(",") if s]
    print("| # | case | exit (%s) | stderr lines | outcome | note |" % "/".join("np%d" % r for r in ranks))
    print("|---|---|---|---|---|---|")
    failed = 0
    for k, (name, case) in enumerate(CASES, 1):
        if only and not any(o in name for o in only):
            continue
        # the rank counts at once: each writes in its own folder, and a
        # case's runs mostly wait for MPI to start and stop
        with concurrent.futures.ThreadPoolExecutor(len(ranks)) as pool:
            res = list(pool.map(lambda np: attempt(case, Ctx(a, np)), ranks))
        ok = all(r[2] for r in res)
        failed += not ok
        note = next((r[3] for r in res if not r[2]), res[0][3]) or ""
        print("| %d | %s | %s | %s | %s | %s |" % (k, name, "/".join(str(r[0]) for r in res), "/".join(str(r[1]) for r in res),
                                                  "pass" if ok else "FAIL", note.replace("|", "\\|")), flush=True)
    print("\n%d cases, %d failing" % (len([1 for n, _ in CASES if not only or any(o in n for o in only)]), failed))
    if a.check and failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
