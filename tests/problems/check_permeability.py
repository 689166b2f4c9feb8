#!/usr/bin/env python3
"""Reads a Darcy run's VTK series back with VTK (python3-vtk9) and checks
its cell field `permeability` against the field itself.

check_permeability.py SERIES.pvd EVAL SPEC [--report FILE.jsonl] [--min-contrast C]
                      [--min-outputs N] [--level-at-y Y LEVEL]

EVAL is tests/fem's permeability_check; it gives FemPermeabilityValue of
SPEC at every cell's centre (the mean of the cell's corners: the centre of
a (bi/tri)linear cell).  Every output of the series must hold the field,
equal to those values to 1e-10 relative, with max/min at least C over the
run (a field that is not there, or constant, fails).  With --report every
record's `permeability` must be SPEC.  With --level-at-y (a field that
jumps along the line y = Y), every cell of the last output with a face on
that line must be of level LEVEL, and some other cell coarser.  Exits 1
with one line on failure."""
import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

try:
    import numpy as np
    # the reader alone, not the whole of vtk (0.24 s of every check's start)
    from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
except ImportError as e:
    sys.exit("check_permeability.py: error: cannot import vtk or numpy (%s): install python3-vtk9 and python3-numpy" % e)


def fail(fmt, *args):
    sys.exit("check_permeability.py: error: " + fmt % args)


def centres(grid):
    """Cell centres: the mean of each cell's corners (VTK_QUAD 9, VTK_HEXAHEDRON 12)."""
    xyz = vtk_to_numpy(grid.GetPoints().GetData()).astype(float)
    conn = vtk_to_numpy(grid.GetCells().GetConnectivityArray())
    offsets = vtk_to_numpy(grid.GetCells().GetOffsetsArray())
    types = set(vtk_to_numpy(grid.GetCellTypesArray()).tolist())
    if not types <= {9, 12} or len(types) != 1:
        fail("cell types %s: expected linear cells", sorted(types))
    ncorner = 4 if 9 in types else 8
    if not np.all(np.diff(offsets) == ncorner):
        fail("cells of other than %d points", ncorner)
    return xyz[conn.reshape(-1, ncorner)].mean(axis=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("series")
    p.add_argument("eval")
    p.add_argument("spec")
    p.add_argument("--report")
    p.add_argument("--min-contrast", type=float, default=1)
    p.add_argument("--min-outputs", type=int, default=1)
    p.add_argument("--level-at-y", nargs=2, type=float)
    a = p.parse_args()
    files = [os.path.join(os.path.dirname(a.series), d.get("file")) for d in ET.parse(a.series).getroot().iter("DataSet")]
    if len(files) < a.min_outputs:
        fail("%s lists %d outputs, expected at least %d", a.series, len(files), a.min_outputs)
    lo, hi, ncells = np.inf, 0.0, 0
    for f in files:
        reader = vtkXMLPUnstructuredGridReader()
        reader.SetFileName(f)
        reader.Update()
        grid = reader.GetOutput()
        arr = grid.GetCellData().GetArray("permeability")
        if arr is None:
            fail("%s: no cell field permeability", f)
        k = vtk_to_numpy(arr).astype(float)
        x = centres(grid)
        text = "".join("%.17g %.17g %.17g\n" % tuple(c) for c in x)
        out = subprocess.run([a.eval, "-check", "eval", "-spec", a.spec], input=text, capture_output=True, text=True)
        want = np.array(out.stdout.split(), dtype=float)
        if out.returncode or len(want) != len(k):
            fail("%s -spec %s gave %d values for %d cells: %s", a.eval, a.spec, len(want), len(k), out.stderr.strip())
        err = np.abs(k - want) / want
        worst = int(np.argmax(err))
        if err[worst] > 1e-10:
            fail("%s: cell %d at %s: permeability %.17g, the field %.17g", f, worst, x[worst], k[worst], want[worst])
        lo, hi, ncells = min(lo, k.min()), max(hi, k.max()), ncells + len(k)
    if a.level_at_y:
        y, want_level = a.level_at_y
        xyz = vtk_to_numpy(grid.GetPoints().GetData()).astype(float)
        conn = vtk_to_numpy(grid.GetCells().GetConnectivityArray()).reshape(grid.GetNumberOfCells(), -1)
        ys = xyz[conn][:, :, 1]
        on = (np.abs(ys.min(axis=1) - y) < 1e-12) | (np.abs(ys.max(axis=1) - y) < 1e-12)
        level = vtk_to_numpy(grid.GetCellData().GetArray("level"))
        if not on.any() or np.any(level[on] != want_level) or level.min() >= want_level:
            fail("%s: cells on y = %g at levels %s, expected all %d; levels of the others from %d", f, y,
                 sorted(set(level[on].tolist())), want_level, level.min())
        print("%s: the %d cells on y = %g are of level %d, the others from %d" % (f, on.sum(), y, want_level, level.min()))
    if hi / lo < a.min_contrast:
        fail("%s: permeability in [%g, %g], contrast %.3g below %g", a.series, lo, hi, hi / lo, a.min_contrast)
    if a.report:
        with open(a.report) as f:
            specs = {json.loads(line).get("permeability") for line in f}
        if specs != {a.spec}:
            fail("%s: permeability %s, expected %s", a.report, sorted(map(str, specs)), a.spec)
    print("%s: %d outputs, %d cells: permeability equals %s at every cell centre, in [%.4g, %.4g] (contrast %.3g)"
          % (a.series, len(files), ncells, a.spec, lo, hi, hi / lo))


main()
