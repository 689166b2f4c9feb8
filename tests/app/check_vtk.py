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
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError as e:
    sys.exit("check_vtk.py: error: cannot import the Python module vtk or numpy (%s): "
             "install the Debian packages python3-vtk9 and python3-numpy" % e)


# VTK's own log would repeat on stderr what the checks report in one line
vtk.vtkLogger.SetStderrVerbosity(vtk.vtkLogger.VERBOSITY_OFF)


class Fail(Exception):
    pass


# VTK cell type -> (dimension, degree)
CELL_TYPES = {9: (2, 1), 12: (3, 1), 70: (2, 2), 72: (3, 2)}
OFF_CENTRE = (0.21, 0.67, 0.38)
MAX_SAMPLED_CELLS = 4000


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
    window = vtk.vtkStringOutputWindow()
    vtk.vtkOutputWindow.SetInstance(window)
    errors = []
    reader = vtk.vtkXMLPUnstructuredGridReader()
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


def sampled(grid, pcoords):
    """Per sampled cell: its point ids, VTK's interpolation weights at
    pcoords and the point VTK maps pcoords to."""
    n = grid.GetNumberOfCells()
    step = max(1, n // MAX_SAMPLED_CELLS)
    sub = vtk.reference(0)
    for i in range(0, n, step):
        cell = grid.GetCell(i)
        npc = cell.GetNumberOfPoints()
        w = [0.0] * npc
        x = [0.0, 0.0, 0.0]
        cell.EvaluateLocation(sub, list(pcoords), x, w)
        ids = [cell.GetPointId(k) for k in range(npc)]
        yield i, ids, np.array(w), np.array(x)


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
    xyz = vtk_to_numpy(grid.GetPoints().GetData()).astype(float)
    # the node order: VTK's interpolation of the nodes at an off-centre
    # point is the multilinear map of the cell's corners there (the trees
    # are multilinear maps), which a misplaced node would move; not so on
    # curved trees (--surface), whose straight twins check the order
    corners = 2 ** dim
    for i, ids, w, x in ([] if a.surface else sampled(grid, OFF_CENTRE)):
        c = xyz[ids[:corners]]
        s = OFF_CENTRE
        f = [(1 - s[0]) if k & 1 == 0 else s[0] for k in range(corners)]
        g = [(1 - s[1]) if k & 2 == 0 else s[1] for k in range(corners)]
        h = [(1 - s[2]) if k & 4 == 0 else s[2] for k in range(corners)] if dim == 3 else [1] * corners
        # VTK corner order 0 1 3 2 (4 5 7 6) to bits x, y, z
        bits = [0, 1, 3, 2, 4, 5, 7, 6][:corners]
        want = sum(f[b] * g[b] * h[b] * c[k] for k, b in enumerate(bits))
        check(np.allclose(x, want, rtol=0, atol=1e-12 * (1 + np.abs(want).max())),
              "%s: cell %d: VTK places its point %s at %s, its corners' map at %s (node order)",
              pvtu, i, OFF_CENTRE[:dim], x, want)
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
        for i, ids, w, x in sampled(grid, OFF_CENTRE):
            worst = max(worst, abs(w @ u[ids] - exact_values(expr, x[None, :])[0]))
        check(worst <= float(tol), "%s: point field %s, interpolated by VTK inside the cells, differs from %s by %.3g",
              pvtu, name, expr, worst)
    for name in a.centre:
        u = field(grid.GetPointData(), name, "point", pvtu)
        cu = field(grid.GetCellData(), name, "cell", pvtu)
        for i, ids, w, x in sampled(grid, (0.5, 0.5, 0.5)):
            check(abs(w @ u[ids] - cu[i]) <= 1e-9 * (1 + abs(cu[i])),
                  "%s: cell %d: point field %s at the centre is %.17g, cell field %.17g", pvtu, i, name, w @ u[ids], cu[i])
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
    u = vtk_to_numpy(grid.GetPointData().GetArray(name)).astype(float)
    xyz = vtk_to_numpy(grid.GetPoints().GetData()).astype(float)
    dim = CELL_TYPES[grid.GetCellType(0)][0] if grid.GetNumberOfCells() else 2
    rule = [(p, w) for p in np.array(np.meshgrid(*[[g[0] for g in GAUSS3]] * dim, indexing="ij")).reshape(dim, -1).T
            for w in [1.0]]
    weights = np.prod(np.array(np.meshgrid(*[[g[1] for g in GAUSS3]] * dim, indexing="ij")).reshape(dim, -1), axis=0)
    bits = [0, 1, 3, 2, 4, 5, 7, 6][:2 ** dim]  # VTK corner k -> (x, y, z) bits
    total = 0.0
    sub = vtk.reference(0)
    for i in range(grid.GetNumberOfCells()):
        cell = grid.GetCell(i)
        ids = [cell.GetPointId(k) for k in range(cell.GetNumberOfPoints())]
        corners = xyz[ids[:2 ** dim]]
        for (pc, _), wq in zip(rule, weights):
            p3 = list(pc) + [0.0] * (3 - dim)
            x, w = [0.0] * 3, [0.0] * len(ids)
            cell.EvaluateLocation(sub, p3, x, w)
            # Jacobian of the multilinear corner map at pc
            J = np.zeros((3, dim))
            for k, b in enumerate(bits):
                for a in range(dim):
                    d = 1.0
                    for e in range(dim):
                        on = (b >> e) & 1
                        d *= (1.0 if on else -1.0) if e == a else (pc[e] if on else 1 - pc[e])
                    J[:, a] += d * corners[k]
            det = np.sqrt(abs(np.linalg.det(J.T @ J)))
            err = np.dot(w, u[ids]) - exact_values(expr, np.array([x]), t)[0]
            total += wq * det * err * err
    return np.sqrt(total)


def integral(grid, name):
    f = vtk.vtkIntegrateAttributes()
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
