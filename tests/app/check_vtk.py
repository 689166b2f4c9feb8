#!/usr/bin/env python3
"""Reads amr2d/amr3d VTK output back with VTK itself (python3-vtk9), as
ParaView would, and checks what it holds.

check_vtk.py OUTPUT [checks...]

OUTPUT is a .pvtu (one output) or a .pvd (a run's series: every output it
lists is checked, their times must increase).  Checks:

  --ranks N            every output has N pieces
  --cells N            every output has N cells
  --degree P           cells of degree P (1: linear, 2: VTK Lagrange), and
                       (P+1)^dim points per cell
  --cell-fields A,B    cell fields present
  --point-fields A,B   point fields present
  --exact F EXPR TOL   point field F equals EXPR (numpy, in x, y, z) to TOL at
                       every point and, through VTK's own interpolation, at
                       an off-centre point of every cell
  --centre F           the cell field F equals VTK's interpolation of the
                       point field F at every cell's centre
  --continuous F       point field F has one value at every place: the
                       nodes cells share (hanging ones included) agree
  --range F LO HI      the values of point field F lie in [LO, HI]
  --cell-range F LO HI the values of cell field F lie in [LO, HI]
  --max F VALUE TOL    the largest value of point field F is VALUE to TOL
  --radius LO HI       the points' distances from the origin fill [LO, HI]
                       (a shell geometry)
  --surface C R        the points keep out of the circle/cylinder (C = CX,CY:
                       distance from the axis along z) or the sphere
                       (C = CX,CY,CZ) of radius R, some lie on it and none
                       within 1e-4 outside it: to 1e-12, the boundary
                       points of a -boundary_shape run lie on the shape
                       (and the node order is not checked: curved cells
                       are not the multilinear maps of their corners)
  --report FILE.jsonl  (.pvd) every output is a cycle of the report: same
                       cells, and its time is the report's sim_time (or the
                       cycle when sim_time is null); the initial state
                       (PREFIX_init.pvtu) is the first output, at time 0,
                       on the first cycle's forest (without the fields
                       the first cycle solves for: --range and
                       --continuous skip them there)
  --integral F KEY TOL (with --report) VTK's integral of point field F over
                       the domain equals the report's KEY to relative TOL
  --l2 F EXPR KEY TOL  (with --report, linear cells) the L2 norm of point
                       field F minus EXPR (may use the output's time t),
                       by the 3-point Gauss rule per direction, equals the
                       report's KEY to relative TOL
  --outputs N          (.pvd) the series lists N outputs
  --same OTHER         OTHER (the same run written binary instead of ASCII,
                       or the other way round) holds the same points, cells
                       and fields, bit for bit
  --broken             also check that damaged copies of OUTPUT (a piece
                       cut short, a piece missing) fail these checks

Exits 1 with one line naming the file and the failed check; exits 1 too
when the vtk module cannot be imported (never passes without reading)."""
import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import numpy as np
    # the modules used, not the whole of vtk (0.24 s of every check's start)
    from vtkmodules.vtkCommonCore import reference, vtkLogger, vtkOutputWindow, vtkStringOutputWindow
    from vtkmodules.vtkFiltersParallel import vtkIntegrateAttributes
    from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
except ImportError as e:
    sys.exit("check_vtk.py: error: cannot import the Python module vtk or numpy (%s): "
             "install the Debian packages python3-vtk9 and python3-numpy" % e)


# VTK's own log would repeat on stderr what the checks report in one line
vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_OFF)


class Fail(Exception):
    pass


# VTK cell type -> (dimension, degree)
CELL_TYPES = {9: (2, 1), 12: (3, 1), 70: (2, 2), 72: (3, 2)}
OFF_CENTRE = (0.21, 0.67, 0.38)


def check(cond, fmt, *args):
    if not cond:
        raise Fail(fmt % args)


def piece_headers(vtu):
    """NumberOfPoints/NumberOfCells of a piece, from its XML header (raw
    appended data makes the whole file no XML document)."""
    with open(vtu, "rb") as f:
        head = f.read(1 << 16).split(b"<AppendedData", 1)[0].decode("latin-1")
    m = re.search(r'<Piece NumberOfPoints="(\d+)" NumberOfCells="(\d+)"', head)
    check(m, "%s: no Piece header", vtu)
    return int(m.group(1)), int(m.group(2))


def read_pvtu(pvtu):
    check(os.path.isfile(pvtu), "%s: missing", pvtu)
    try:
        sources = [p.get("Source") for p in ET.parse(pvtu).getroot().iter("Piece")]
    except ET.ParseError as e:
        raise Fail("%s: not XML: %s" % (pvtu, e))
    check(sources, "%s: lists no pieces", pvtu)
    # the pieces of NAME.pvtu lie in the folder NAME/ beside it, one per rank
    stem = os.path.basename(pvtu)[:-len(".pvtu")]
    expect = ["%s/%s_%04d.vtu" % (stem, stem, r) for r in range(len(sources))]
    check(sources == expect, "%s: pieces %s, expected %s", pvtu, sources[:2], expect[:2])
    npts = ncells = 0
    for s in sources:
        path = os.path.join(os.path.dirname(pvtu), s)
        check(os.path.isfile(path), "%s: piece %s missing", pvtu, s)
        p, c = piece_headers(path)
        npts += p
        ncells += c
    # VTK reports trouble through its output window, not by exceptions
    window = vtkStringOutputWindow()
    vtkOutputWindow.SetInstance(window)
    errors = []
    reader = vtkXMLPUnstructuredGridReader()
    reader.AddObserver("ErrorEvent", lambda obj, ev: errors.append(ev))
    reader.SetFileName(pvtu)
    reader.Update()
    text = window.GetOutput()
    check(not errors and "ERROR" not in text and "Error" not in text,
          "%s: VTK cannot read it: %s", pvtu, " ".join(text.split())[:300])
    grid = reader.GetOutput()
    check(grid.GetNumberOfCells() == ncells and grid.GetNumberOfPoints() == npts,
          "%s: VTK read %d cells, %d points; the pieces say %d, %d", pvtu,
          grid.GetNumberOfCells(), grid.GetNumberOfPoints(), ncells, npts)
    return grid, len(sources)


def field(data, name, where, pvtu):
    arr = data.GetArray(name)
    check(arr is not None, "%s: no %s field %s", pvtu, where, name)
    return vtk_to_numpy(arr).astype(float)


def exact_values(expr, xyz, t=0.0):
    env = {"np": np, "x": xyz[:, 0], "y": xyz[:, 1], "z": xyz[:, 2], "t": t,
           "sin": np.sin, "cos": np.cos, "exp": np.exp, "sqrt": np.sqrt, "pi": np.pi}
    return np.broadcast_to(np.asarray(eval(expr, env), dtype=float), (len(xyz),))


# VTK corner k of a linear cell -> its (x, y, z) bits on the unit cell
VTK_BITS = [0, 1, 3, 2, 4, 5, 7, 6]


def corner_jacobians(corners, pc):
    """The Jacobians (ncells x 3 x dim) at parametric point pc of the
    multilinear maps of the cells' corners (ncells x 2^dim x 3, VTK's
    order): corner k's derivative along a, the other directions' factors
    at pc."""
    dim = len(pc)
    dN = np.array([[np.prod([((1.0 if b >> e & 1 else -1.0) if e == a else (pc[e] if b >> e & 1 else 1 - pc[e])) for e in range(dim)])
                    for a in range(dim)] for b in VTK_BITS[:2 ** dim]])
    return np.einsum("ka,ckd->cda", dN, corners)


def cell_points(grid):
    """Every cell's point ids (ncells x npc: the cells are of one type) and
    the points (npoints x 3)."""
    ncells = grid.GetNumberOfCells()
    ids = vtk_to_numpy(grid.GetCells().GetConnectivityArray()).reshape(ncells, -1) if ncells else np.zeros((0, 1), dtype=int)
    return ids, vtk_to_numpy(grid.GetPoints().GetData()).astype(float)


def sampled(grid, ids, xyz, pcoords):
    """VTK's interpolation at pcoords in every cell of a grid of cells
    (ids, xyz: cell_points'): VTK's weights (npc; the same in every cell
    of the one type, so asked of the first) and the points they map
    pcoords to (ncells x 3), as VTK's EvaluateLocation sums them."""
    w, x = [0.0] * ids.shape[1], [0.0] * 3
    grid.GetCell(0).EvaluateLocation(reference(0), list(pcoords), x, w)
    w = np.array(w)
    return w, np.einsum("k,ckd->cd", w, xyz[ids])


def solved_later(grid, name, pvtu):
    """The initial state (PREFIX_init.pvtu) has no field the first cycle
    solves for (darcy-transport's pressure)."""
    return pvtu.endswith("_init.pvtu") and not grid.GetPointData().HasArray(name)


def check_output(pvtu, a):
    grid, npieces = read_pvtu(pvtu)
    ncells, npts = grid.GetNumberOfCells(), grid.GetNumberOfPoints()
    if a.ranks is not None:
        check(npieces == a.ranks, "%s: %d pieces, expected %d", pvtu, npieces, a.ranks)
    if a.cells is not None:
        check(ncells == a.cells, "%s: %d cells, expected %d", pvtu, ncells, a.cells)
    types = set(vtk_to_numpy(grid.GetCellTypesArray()).tolist()) if ncells else set()
    check(len(types) == 1 and types <= set(CELL_TYPES), "%s: cell types %s", pvtu, sorted(types))
    dim, degree = CELL_TYPES[types.pop()]
    if a.degree is not None:
        check(degree == a.degree, "%s: cells of degree %d, expected %d", pvtu, degree, a.degree)
    check(npts == ncells * (degree + 1) ** dim, "%s: %d points for %d cells of degree %d in %dD",
          pvtu, npts, ncells, degree, dim)
    for name in filter(None, a.cell_fields.split(",")):
        field(grid.GetCellData(), name, "cell", pvtu)
    for name in filter(None, a.point_fields.split(",")):
        field(grid.GetPointData(), name, "point", pvtu)
    ids, xyz = cell_points(grid)
    # the node order: VTK's interpolation of the nodes at an off-centre
    # point is the multilinear map of the cell's corners there (the trees
    # are multilinear maps), which a misplaced node would move; not so on
    # curved trees (--surface), whose straight twins check the order
    corners = 2 ** dim
    c = xyz[ids[:, :corners]]
    if ncells and not a.surface:
        _, x = sampled(grid, ids, xyz, OFF_CENTRE)
        s = OFF_CENTRE
        mult = np.array([np.prod([s[d] if b >> d & 1 else 1 - s[d] for d in range(dim)]) for b in VTK_BITS[:corners]])
        want = np.einsum("k,ckd->cd", mult, c)
        bad = np.abs(x - want) > 1e-12 * (1 + np.abs(want).max(axis=1))[:, None]
        i = int(np.argmax(bad.any(axis=1)))
        check(not bad.any(), "%s: cell %d: VTK places its point %s at %s, its corners' map at %s (node order)",
              pvtu, i, OFF_CENTRE[:dim], x[i], want[i])
    # ... which compares VTK with the same corners, so nodes in another
    # order (p4est's z-order) would pass it; their cells fold over: the
    # corners' map must turn one way at every corner of a cell
    if ncells:
        det = np.array([np.linalg.det(corner_jacobians(c, [b >> d & 1 for d in range(dim)])[:, :dim, :]) for b in range(corners)]).T
        i = int(np.argmax(~((det > 0).all(axis=1) | (det < 0).all(axis=1))))
        check((det[i] > 0).all() or (det[i] < 0).all(), "%s: cell %d folds over (the Jacobian determinants of its corners' map %s): its nodes are not in VTK's order",
              pvtu, i, np.array2string(det[i], precision=3))
    if a.radius:
        r = np.linalg.norm(xyz, axis=1)
        lo, hi = map(float, a.radius)
        check(abs(r.min() - lo) <= 1e-12 and abs(r.max() - hi) <= 1e-12, "%s: points at distances %.17g .. %.17g from the origin, not %s .. %s",
              pvtu, r.min(), r.max(), lo, hi)
    if a.surface:
        c = np.array([float(v) for v in a.surface[0].split(",")])
        r = np.linalg.norm(xyz[:, :len(c)] - c, axis=1) - float(a.surface[1])
        on = np.abs(r) <= 1e-12
        check(r.min() >= -1e-12 and on.any() and not ((r > 1e-12) & (r < 1e-4)).any(),
              "%s: points at %.3g .. %.3g from the surface %s (%d on it): not all on or beyond it", pvtu, r.min(), r.max(), a.surface, on.sum())
    for name, expr, tol in a.exact:
        u = field(grid.GetPointData(), name, "point", pvtu)
        err = np.abs(u - exact_values(expr, xyz)).max() if npts else 0.0
        check(err <= float(tol), "%s: point field %s differs from %s by %.3g at the nodes (tolerance %s)",
              pvtu, name, expr, err, tol)
        worst = 0.0
        if ncells:
            w, x = sampled(grid, ids, xyz, OFF_CENTRE)
            worst = np.abs(u[ids] @ w - exact_values(expr, x)).max()
        check(worst <= float(tol), "%s: point field %s, interpolated by VTK inside the cells, differs from %s by %.3g",
              pvtu, name, expr, worst)
    for name in a.centre:
        u = field(grid.GetPointData(), name, "point", pvtu)
        cu = field(grid.GetCellData(), name, "cell", pvtu)
        if not ncells:
            continue
        w, _ = sampled(grid, ids, xyz, (0.5, 0.5, 0.5))
        at = u[ids] @ w
        i = int(np.argmax(np.abs(at - cu) - 1e-9 * (1 + np.abs(cu))))
        check(abs(at[i] - cu[i]) <= 1e-9 * (1 + abs(cu[i])),
              "%s: cell %d: point field %s at the centre is %.17g, cell field %.17g", pvtu, i, name, at[i], cu[i])
    for name in a.continuous:
        if solved_later(grid, name, pvtu):
            continue
        u = field(grid.GetPointData(), name, "point", pvtu)
        # nodes of neighbouring cells, computed from each cell, may differ
        # by round-off: a place is a point rounded to 1e-9 of the extent
        ext = max(1e-300, np.ptp(xyz, axis=0).max())
        keys = np.round(xyz / (1e-9 * ext)).astype(np.int64)
        _, place = np.unique(keys, axis=0, return_inverse=True)
        place = place.ravel()
        lo = np.full(place.max() + 1, np.inf)
        hi = np.full(place.max() + 1, -np.inf)
        np.minimum.at(lo, place, u)
        np.maximum.at(hi, place, u)
        jump = (hi - lo).max()
        check(jump <= 1e-12 * (1 + np.abs(u).max()), "%s: point field %s jumps by %.3g between cells sharing a node", pvtu, name, jump)
    summary = []
    for name, lo, hi in a.range:
        if solved_later(grid, name, pvtu):
            continue
        u = field(grid.GetPointData(), name, "point", pvtu)
        check(u.min() >= float(lo) and u.max() <= float(hi), "%s: point field %s in [%.17g, %.17g], not within [%s, %s]",
              pvtu, name, u.min(), u.max(), lo, hi)
        summary.append("%s in [%.6g, %.6g]" % (name, u.min(), u.max()))
    for name, lo, hi in a.cell_range:
        u = field(grid.GetCellData(), name, "cell", pvtu)
        check(u.min() >= float(lo) and u.max() <= float(hi), "%s: cell field %s in [%.17g, %.17g], not within [%s, %s]",
              pvtu, name, u.min(), u.max(), lo, hi)
        summary.append("cell %s in [%.17g, %.17g]" % (name, u.min(), u.max()))
    for name, value, tol in a.max:
        u = field(grid.GetPointData(), name, "point", pvtu)
        check(abs(u.max() - float(value)) <= float(tol), "%s: largest %s %.17g, expected %s to %s", pvtu, name, u.max(), value, tol)
        summary.append("max %s %.9g" % (name, u.max()))
    return grid, "%d pieces, %d cells, %d points, degree %d%s" % (
        npieces, ncells, npts, degree, "".join(", " + s for s in summary))


GAUSS3 = [(0.5 - 0.5 * np.sqrt(0.6), 5 / 18), (0.5, 8 / 18), (0.5 + 0.5 * np.sqrt(0.6), 5 / 18)]


def l2_error(grid, name, expr, t):
    """sqrt(int (F - EXPR)^2) with the tensor 3-point Gauss rule on every
    (multilinear) cell, F interpolated by VTK."""
    if not grid.GetNumberOfCells():
        return 0.0
    u = vtk_to_numpy(grid.GetPointData().GetArray(name)).astype(float)
    ids, xyz = cell_points(grid)
    dim = CELL_TYPES[grid.GetCellType(0)][0]
    total = 0.0
    for q in np.array(np.meshgrid(*[range(3)] * dim, indexing="ij")).reshape(dim, -1).T:
        pc = [GAUSS3[i][0] for i in q]
        wq = np.prod([GAUSS3[i][1] for i in q])
        w, x = sampled(grid, ids, xyz, pc + [0.0] * (3 - dim))
        J = corner_jacobians(xyz[ids[:, :2 ** dim]], pc)
        det = np.sqrt(np.abs(np.linalg.det(np.einsum("cda,cdb->cab", J, J))))
        err = u[ids] @ w - exact_values(expr, x, t)
        total += wq * np.sum(det * err * err)
    return np.sqrt(total)


def integral(grid, name):
    f = vtkIntegrateAttributes()
    f.SetInputData(grid)
    f.Update()
    return f.GetOutput().GetPointData().GetArray(name).GetValue(0)


def check_series(pvd, a):
    try:
        sets = list(ET.parse(pvd).getroot().iter("DataSet"))
    except (ET.ParseError, OSError) as e:
        raise Fail("%s: cannot read: %s" % (pvd, e))
    check(sets, "%s: lists no outputs", pvd)
    if a.outputs is not None:
        check(len(sets) == a.outputs, "%s: %d outputs, expected %d", pvd, len(sets), a.outputs)
    times = [float(s.get("timestep")) for s in sets]
    check(all(t1 > t0 for t0, t1 in zip(times, times[1:])), "%s: times do not increase: %s", pvd, times)
    report = {}
    if a.report:
        with open(a.report) as f:
            for line in f:
                r = json.loads(line)
                report[r["cycle"]] = r
    lines = []
    for s, t in zip(sets, times):
        pvtu = os.path.join(os.path.dirname(pvd), s.get("file"))
        grid, text = check_output(pvtu, a)
        if a.report and pvtu.endswith("_init.pvtu"):
            first = report[min(report)]
            check(s is sets[0] and t == 0.0, "%s: the initial state %s is not the first output at time 0 (time %.17g)", pvd, s.get("file"), t)
            check(grid.GetNumberOfCells() == first["cells"], "%s: %s has %d cells, the first cycle's forest %d", pvd, s.get("file"),
                  grid.GetNumberOfCells(), first["cells"])
        elif a.report:
            m = re.search(r"_(\d+)\.pvtu$", pvtu)
            check(m and int(m.group(1)) in report, "%s: no report record for %s", pvd, s.get("file"))
            r = report[int(m.group(1))]
            want = r["sim_time"] if r.get("sim_time") is not None else r["cycle"]
            check(abs(t - want) <= 1e-12 * (1 + abs(want)), "%s: %s at time %.17g, the report says %.17g", pvd, s.get("file"), t, want)
            check(grid.GetNumberOfCells() == r["cells"], "%s: %s has %d cells, the report %d", pvd, s.get("file"),
                  grid.GetNumberOfCells(), r["cells"])
            for name, key, tol in a.integral:
                v = integral(grid, name)
                check(abs(v - r[key]) <= float(tol) * abs(r[key]), "%s: %s: integral of %s %.17g, report's %s %.17g",
                      pvd, s.get("file"), name, v, key, r[key])
                text += ", integral of %s %.12g (%s %.12g)" % (name, v, key, r[key])
            for name, expr, key, tol in a.l2:
                # every rank's part is summed: the pieces together are the domain
                v = l2_error(grid, name, expr, t)
                check(abs(v - r[key]) <= float(tol) * abs(r[key]), "%s: %s: L2 norm of %s - (%s) %.17g, report's %s %.17g",
                      pvd, s.get("file"), name, expr, v, key, r[key])
                text += ", L2 error of %s %.12g (%s %.12g)" % (name, v, key, r[key])
        lines.append("  t %-10.6g %s: %s" % (t, s.get("file"), text))
    return "%s: %d outputs, times %.6g .. %.6g\n%s" % (pvd, len(sets), times[0], times[-1], "\n".join(lines))


def arrays(grid):
    out = {"points": grid.GetPoints().GetData(), "connectivity": grid.GetCells().GetConnectivityArray(),
           "types": grid.GetCellTypesArray()}
    for where, data in (("point", grid.GetPointData()), ("cell", grid.GetCellData())):
        for k in range(data.GetNumberOfArrays()):
            out[where + " " + data.GetArrayName(k)] = data.GetArray(k)
    return {k: vtk_to_numpy(v) for k, v in out.items()}


def outputs(path):
    if not path.endswith(".pvd"):
        return [path]
    return [os.path.join(os.path.dirname(path), s.get("file")) for s in ET.parse(path).getroot().iter("DataSet")]


def check_same(path, other):
    mine, theirs = outputs(path), outputs(other)
    check(len(mine) == len(theirs), "%s: %d outputs, %s %d", path, len(mine), other, len(theirs))
    for f, g in zip(mine, theirs):
        x, y = arrays(read_pvtu(f)[0]), arrays(read_pvtu(g)[0])
        check(sorted(x) == sorted(y), "%s: arrays %s, %s has %s", f, sorted(x), g, sorted(y))
        for k in x:
            check(x[k].shape == y[k].shape and np.array_equal(x[k], y[k]), "%s: %s differs from %s's", f, k, g)
    return "same points, cells and fields as %s (%d outputs)" % (other, len(theirs))


def run(path, a):
    text = check_series(path, a) if path.endswith(".pvd") else "%s: %s" % (path, check_output(path, a)[1])
    return text + ("\n" + check_same(path, a.same) if a.same else "")


def damaged_copies(path):
    """Copies of the output's files with one piece cut to half its size,
    and with one piece deleted; yields (what, path of the copy)."""
    src = os.path.dirname(path) or "."
    stem = re.sub(r"\.(pvd|pvtu)$", "", os.path.basename(path))
    for what in ("a piece cut short", "a piece missing"):
        tmp = tempfile.mkdtemp(prefix="check_vtk_")
        for f in os.listdir(src):
            if f.startswith(stem):
                (shutil.copytree if os.path.isdir(os.path.join(src, f)) else shutil.copy)(os.path.join(src, f), os.path.join(tmp, f))
        pieces = sorted(glob.glob(os.path.join(tmp, "*", "*.vtu")))
        victim = pieces[-1]
        if what == "a piece missing":
            os.remove(victim)
        else:
            os.truncate(victim, os.path.getsize(victim) // 2)
        yield what, tmp, os.path.join(tmp, os.path.basename(path))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("output")
    p.add_argument("--ranks", type=int)
    p.add_argument("--cells", type=int)
    p.add_argument("--degree", type=int)
    p.add_argument("--outputs", type=int)
    p.add_argument("--l2", nargs=4, action="append", default=[], metavar=("F", "EXPR", "KEY", "TOL"))
    p.add_argument("--cell-fields", default="")
    p.add_argument("--point-fields", default="")
    p.add_argument("--exact", nargs=3, action="append", default=[], metavar=("F", "EXPR", "TOL"))
    p.add_argument("--centre", action="append", default=[])
    p.add_argument("--continuous", action="append", default=[])
    p.add_argument("--range", nargs=3, action="append", default=[], metavar=("F", "LO", "HI"))
    p.add_argument("--cell-range", nargs=3, action="append", default=[], metavar=("F", "LO", "HI"))
    p.add_argument("--max", nargs=3, action="append", default=[], metavar=("F", "VALUE", "TOL"))
    p.add_argument("--radius", nargs=2)
    p.add_argument("--surface", nargs=2)
    p.add_argument("--report")
    p.add_argument("--integral", nargs=3, action="append", default=[], metavar=("F", "KEY", "TOL"))
    p.add_argument("--same")
    p.add_argument("--broken", action="store_true")
    a = p.parse_args()
    try:
        print(run(a.output, a))
    except Fail as e:
        sys.exit("check_vtk.py: error: %s" % e)
    if a.broken:
        for what, tmp, copy in damaged_copies(a.output):
            try:
                run(copy, a)
                failed = None
            except Fail as e:
                failed = str(e)
            finally:
                shutil.rmtree(tmp)
            if failed is None:
                sys.exit("check_vtk.py: error: a copy of %s with %s passes the checks" % (a.output, what))
            print("with %s: fails as it should (%s)" % (what, failed.replace(tmp + "/", "")))


main()
