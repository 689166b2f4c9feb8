#!/usr/bin/env python3
"""Paths in an options file are relative to the file, paths on the command
line to the current folder, and -report/-checkpoint/-vtk create missing
folders.

    paths_check.py SOURCE_DIR WORK_DIR AMR2D [LAUNCHER ...]

Writes WORK_DIR/opts/run.opts (lshape, its -mesh relative to that folder,
-report, -checkpoint and -vtk into folders that do not exist) and runs
LAUNCHER AMR2D -options_file ../opts/run.opts from WORK_DIR/cwd: the
outputs must appear under WORK_DIR/opts; then again with -report on the
command line after the file (relative to WORK_DIR/cwd) and before it (the
file's value wins, as PETSc reads the command line in order).  The two
cycles' cell counts must be those of meshes/lshape.inp.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

CELLS = [72, 138]  # meshes/lshape.inp at level 1, then one adaptive cycle


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.exit("paths_check.py: %s exited with %d:\n%s" % (" ".join(cmd), p.returncode, p.stdout))


def cells(path):
    if not os.path.isfile(path):
        sys.exit("paths_check.py: no report %s" % path)
    with open(path) as f:
        got = [json.loads(line)["cells"] for line in f if line.strip()]
    if got != CELLS:
        sys.exit("paths_check.py: %s has cells %s, meshes/lshape.inp gives %s" % (path, got, CELLS))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source")
    ap.add_argument("work")
    ap.add_argument("amr2d", nargs=argparse.REMAINDER, help="LAUNCHER ... AMR2D (e.g. mpiexec -n 2 build/bin/amr2d)")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    opts, cwd = os.path.join(a.work, "opts"), os.path.join(a.work, "cwd")
    os.makedirs(opts)
    os.makedirs(cwd)
    mesh = os.path.relpath(os.path.join(a.source, "meshes", "lshape.inp"), opts)
    with open(os.path.join(opts, "run.opts"), "w") as f:
        f.write("-problem lshape\n-mesh %s\n-amr_min_level 1\n-amr_cycles 2\n-report out/r.jsonl\n"
                "-checkpoint ck/deep/run\n-vtk vtk/m\n" % mesh)
    amr = a.amr2d + ["-options_file", "../opts/run.opts"]

    run(amr, cwd)
    cells(os.path.join(opts, "out", "r.jsonl"))
    for f in ("ck/deep/run.manifest", "vtk/m.pvd"):
        if not os.path.isfile(os.path.join(opts, f)):
            sys.exit("paths_check.py: no %s under the options file's folder %s" % (f, opts))
    if os.listdir(cwd):
        sys.exit("paths_check.py: the run wrote %s into the current folder" % os.listdir(cwd))

    run(amr + ["-report", "here/r.jsonl"], cwd)
    cells(os.path.join(cwd, "here", "r.jsonl"))

    os.remove(os.path.join(opts, "out", "r.jsonl"))
    run(a.amr2d + ["-report", "before.jsonl", "-options_file", "../opts/run.opts"], cwd)
    cells(os.path.join(opts, "out", "r.jsonl"))
    if os.path.exists(os.path.join(cwd, "before.jsonl")):
        sys.exit("paths_check.py: -report before -options_file won over the file's")
    print("paths check passed")


if __name__ == "__main__":
    main()
