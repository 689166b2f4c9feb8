#!/usr/bin/env python3
"""The load trace (-trace_loads) against the app's report and lbbench.

roundtrip: run the app with ARGS -trace_loads DIR/good.trace -report
  DIR/run.jsonl on --ranks ranks; check the trace (one record per cycle in
  order, the cells of the adapted forest, the app's split, the cells'
  positions tiling every tree in curve order, with -lb_weights phases the
  phases' weights as the report's fits) and replay every
  cycle the app balanced with lbbench on as many ranks (virtual backend and
  MPI backend, the latter for the first two such cycles: an mpiexec each)
  with the app's method (sfc-shift: its sequence on the measured times, and
  some step must leave sfc's cuts): the cuts (lb_cut_cells), the cells
  they move (lb_cut_migrated_cells) and the iteration counts must be the
  app's exactly.  --replicate R (sfc): the curve tiled R times on R times
  the ranks is cut R times as the app cut it.  --tasks: the cells as tasks
  on a mesh of 2^dim ranks keep their number and weight, and zoltan-rcb
  balances them to within 5%.  --damage writes the bad traces of the bad-input tests
  beside it: DIR/truncated.trace (the last record cut short),
  DIR/version.trace (format version 3), DIR/v1.trace (the trace in
  format version 1, which must replay as the version 2 one), DIR/nan_centre.trace (the first
  cell of the last record with a NaN centre).

mesh: lbbench task mode with -mesh MESH (the cells' true face neighbours,
  the start split, -graph subdomains:P).  The forest of --adjacency's
  program (trace_adjacency on MESH at --level, written as a trace): the
  task edges must be its p4est_mesh face-neighbour pairs, which the program
  prints.  The app's run of ARGS -mesh MESH on --ranks ranks without
  rebalancing (-lb_method none): in every cycle, with the app's split at
  as many ranks, the subdomain graph's edges must be the rank pairs the app
  measured sharing a face (comm_edges), the cut task edges its edge_cut,
  and the total weight the trace's weights in units, before and after
  balancing.  The cycle that grew most, carried to 2 and 4 ranks, balanced with
  second-order and 3 passes of selection on the subdomain graph: identical
  on the virtual backend and on 2 and 4 MPI ranks, migration at least its
  lower bound.

restart: a run of ARGS with -checkpoint_interval 2 and a restart from its
  last checkpoint both write DIR/restart.trace; it must hold every cycle
  once, in order, with the cells of a straight run's DIR/straight.trace.
"""
import argparse
import json
import os
import shlex
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "postprocess"))
import report_ranks  # noqa: E402

FILE = struct.Struct("<8s6I")
CYCLE_V1 = struct.Struct("<4s5iqq8x8d")
CYCLE = struct.Struct("<4s5iqqi4x8d" + "16s" * 12)  # version 2: phases and their names
MAXLEVEL = {2: 30, 3: 19}


def cell_bytes(version, dim, K=0):
    return 9 + 4 * dim if version == 1 else 14 + 8 * dim + 8 * K


def read_trace(path):
    """Every cycle record of a trace (version 1 or 2): a dict of its fields,
    raw cells and, in version 2, every cell's (tree, level, coordinates) and
    phase weights."""
    data = open(path, "rb").read()
    magic, version, dim, cb, chb, ntypes_max, _ = FILE.unpack_from(data, 0)
    assert magic == b"AMRTRACE" and version in (1, 2) and dim in (2, 3), (magic, version, dim)
    head = CYCLE_V1 if version == 1 else CYCLE
    assert cb == cell_bytes(version, dim) and chb == head.size and ntypes_max == 8
    at, out = FILE.size, []
    while at < len(data):
        if version == 1:
            tag, cycle, P, weights, ntypes, flags, N, nbytes, *cost = head.unpack_from(data, at)
            K, names = 0, []
        else:
            tag, cycle, P, weights, ntypes, flags, N, nbytes, K, *rest = head.unpack_from(data, at)
            cost, names = rest[:8], [n.rstrip(b"\0").decode() for n in rest[8:8 + K]]
        cb = cell_bytes(version, dim, K)
        assert tag == b"CYCL" and nbytes == head.size + 24 * P + N * cb and at + nbytes <= len(data), (path, at)
        arr = at + head.size
        first = struct.unpack_from("<%dq" % P, data, arr)
        cells = data[arr + 24 * P: at + nbytes]
        weights_of_cells = [struct.unpack_from("<d", cells, i * cb)[0] for i in range(N)]
        rec = dict(cycle=cycle, P=P, weights=weights, ntypes=ntypes, flags=flags, N=N, first=list(first), version=version,
                   ranks=data[arr: arr + 24 * P],
                   cost=cost[:ntypes], w=weights_of_cells, cells=cells, at=at, bytes=nbytes, dim=dim, K=K, phases=names, cb=cb)
        if version == 2:
            pos = struct.Struct("<iB%di%dd" % (dim, K))
            cell = [pos.unpack_from(cells, i * cb + 9 + 4 * dim) for i in range(N)]
            rec["pos"] = [(c[0], c[1], tuple(c[2:2 + dim])) for c in cell]
            rec["pw"] = [c[2 + dim:] for c in cell]
        out.append(rec)
        at += nbytes
    return out


# SPREAD[dim][byte]: the byte's bits dim places apart, the bit-by-bit
# interleave a byte at a time (a trace's every cell is placed)
SPREAD = {dim: [sum(((v >> b) & 1) << (dim * b) for b in range(8)) for v in range(256)] for dim in (2, 3)}


def morton(dim, x):
    """The quadrant's index on p4est's curve of its tree (x fastest)."""
    spread, m = SPREAD[dim], 0
    for d in range(dim):
        for k in range(0, MAXLEVEL[dim], 8):
            m |= spread[(x[d] >> k) & 255] << (dim * k + d)
    return m


def check_positions(rec):
    """The cells' positions must tile every tree they touch exactly, in
    curve order: each cell on its level's grid and starting where the one
    before it ends (or at a tree's origin), every tree ending full."""
    dim, L = rec["dim"], MAXLEVEL[rec["dim"]]
    trees, tree, end = [], None, 0
    for k, (t, level, x) in enumerate(rec["pos"]):
        assert 0 <= level <= L and all(0 <= c < 1 << L and c % (1 << (L - level)) == 0 for c in x), (k, t, level, x)
        if t != tree:
            assert tree is None or (t > tree and end == 1 << (dim * L)), "cycle %d: tree %s ends at %d before cell %d" % (rec["cycle"], tree, end, k)
            tree, end = t, 0
            trees.append(t)
        assert morton(dim, x) == end, "cycle %d: cell %d at %d, the curve is at %d" % (rec["cycle"], k, morton(dim, x), end)
        end += 1 << (dim * (L - level))
    assert end == 1 << (dim * L), "cycle %d: the last tree is not full" % rec["cycle"]
    return trees


def downgrade(recs):
    """The records as format version 1 wrote them (no phases, no positions)."""
    dim = recs[0]["dim"]
    out = [FILE.pack(b"AMRTRACE", 1, dim, cell_bytes(1, dim), CYCLE_V1.size, 8, 0)]
    for rec in recs:
        cb = rec["cb"]
        cells = b"".join(rec["cells"][i * cb: i * cb + 9 + 4 * dim] for i in range(rec["N"]))
        out.append(CYCLE_V1.pack(b"CYCL", rec["cycle"], rec["P"], rec["weights"], rec["ntypes"], rec["flags"], rec["N"],
                                 CYCLE_V1.size + len(rec["ranks"]) + len(cells), *(list(rec["cost"]) + [float("nan")] * (8 - rec["ntypes"]))))
        out += [rec["ranks"], cells]
    return b"".join(out)


def check_phases(rec, line):
    """The phase weights of -lb_weights phases: one per modelled phase, in
    the report's order and names; a phase weighs every cell its type's
    fitted cost (the report's cost_s) times one factor per rank (the
    rank's measured ratio to the model), but the phase of measured cell
    costs weighs its cells as much as the phase's own CPU time on all
    ranks together."""
    phases = line.get("phases") or {}
    modelled = [n for n, ph in phases.items() if ph["model"] != "measured"]
    if line["lb_weights"] != "phases":
        assert rec["K"] == 0, rec["K"]
        return 0
    assert rec["phases"] == [n[:15] for n in modelled], (rec["phases"], modelled)
    cb = rec["cb"]
    for k, name in enumerate(modelled):
        ph = phases[name]
        w = [p[k] for p in rec["pw"]]
        types = [rec["cells"][i * cb + 8] for i in range(rec["N"])]
        bounds = rec["first"] + [rec["N"]]
        factors = [[x / ph["cost_s"][t] for x, t in zip(w[a:b], types[a:b]) if ph["cost_s"][t] > 0] for a, b in zip(bounds, bounds[1:])]
        if not all(abs(f - fs[0]) <= 1e-12 * abs(fs[0]) for fs in factors if fs for f in fs):
            # only the phase of the measured cell costs weighs otherwise
            own = sum(report_ranks.values(line, "phases.%s.own_cpu" % name))
            assert abs(sum(w) - own) <= 1e-9 * own, "cycle %d phase %s: cells weigh %g, the phase's own time %g" % (rec["cycle"], name, sum(w), own)
    return rec["K"]


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        sys.exit("failed (%d):\n%s" % (r.returncode, r.stdout))
    return r.stdout


def mpi(a, n):
    return shlex.split(a.mpiexec) + ["-n", str(n)]


def app_option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def roundtrip(a, args):
    os.makedirs(a.dir, exist_ok=True)
    trace, report = os.path.join(a.dir, "good.trace"), os.path.join(a.dir, "run.jsonl")
    for f in (trace, report):
        if os.path.exists(f):
            os.remove(f)
    run(mpi(a, a.ranks) + [a.amr] + args + ["-trace_loads", trace, "-report", report])
    lines = report_ranks.records(report)
    for line in lines:
        # the cells each rank was given: the side file's, one per rank
        line["lb_cut_cells"] = report_ranks.values(line, "lb_cut_cells")
    recs = read_trace(trace)
    assert [r["cycle"] for r in recs] == [l["cycle"] for l in lines], "one trace record per reported cycle"
    method = lines[0]["lb_method"]
    graph = lines[0]["lb_graph"]
    opts = ["-lb_method", method, "-lb_target", app_option(args, "-lb_target", "0.99"),
            "-lb_max_iters", app_option(args, "-lb_max_iters", "1000"),
            "-lb_check_interval", app_option(args, "-lb_check_interval", "10")]
    replayed = shifted = phased = 0
    for rec, line in zip(recs, lines):
        assert rec["P"] == a.ranks and rec["N"] > 0 and rec["version"] == 2
        trees = check_positions(rec)
        assert trees == list(range(len(trees))), "cycle %d: the cells cover trees %s" % (rec["cycle"], trees)
        phased += check_phases(rec, line) > 0
        assert rec["weights"] == ["count", "timing", "model", "measured", "phases"].index(line["lb_weights"])
        assert all(abs(c - w) <= 1e-12 * abs(w) for c, w in zip(rec["cost"], line["weights"])), (rec["cost"], line["weights"])
        balanced = bool(rec["flags"] & 1)
        assert balanced == (line["lb_cut_cells"] is not None), rec["cycle"]
        if not balanced:
            continue
        assert sum(line["lb_cut_cells"]) == rec["N"]
        for backend in ("virtual", "mpi") if replayed < 2 else ("virtual",):
            out = os.path.join(a.dir, "replay.jsonl")
            if os.path.exists(out):
                os.remove(out)
            cmd = ["-chain", "-graph", "%s:%d" % (graph, a.ranks), "-scenario", "%s:%s:%d" % ("trace", trace, rec["cycle"]),
                   "-trace_split", "app", "-json", out] + opts
            run(([a.lbbench, "-virtual"] if backend == "virtual" else mpi(a, a.ranks) + [a.lbbench]) + cmd)
            r = json.loads(open(out).read())
            got = (r["part_cells"], r["migrated_cells"], r["iterations"], r["target_iteration"])
            want = (line["lb_cut_cells"], line["lb_cut_migrated_cells"], line["lb_iterations"], line["lb_target_iteration"])
            assert got == want, "cycle %d on the %s backend: lbbench %s, the app %s" % (rec["cycle"], backend, got, want)
            shifted += r.get("shift_step") == "shifted" and r["sfc_cut_distance"] > 0
        replayed += 1
    assert replayed >= 2, "too few balanced cycles to replay (%d)" % replayed
    # sfc-shift: the measured times, not the weights, must have moved cuts
    assert method != "sfc-shift" or shifted >= 1, "no sfc-shift step shifted a cut away from sfc's"
    assert lines[0]["lb_weights"] != "phases" or phased >= 2, "too few cycles with phase weights (%d)" % phased
    last = [(rec, line) for rec, line in zip(recs, lines) if rec["flags"] & 1][-1]
    if a.replicate > 1:
        replicate(a, trace, opts, graph, *last)
    if a.tasks:
        tasks(a, trace, *last)
    if method == "sfc":
        carry(a, trace, graph, recs, lines)
    refine(a, trace, graph, *last)
    size = os.path.getsize(trace)
    cells = sum(r["N"] for r in recs)
    print("round trip: %d of %d cycles replayed on %d ranks (%s, %dD): cuts, migrated cells and iterations identical; "
          "trace %d bytes for %d cells, %.1f bytes per cell; positions tile the trees%s" % (replayed, len(recs), a.ranks, method, recs[0]["dim"],
          size, cells, size / cells, "; %d cycles' phase weights as the report's fits" % phased if phased else ""))
    if a.damage:
        data = open(trace, "rb").read()
        open(os.path.join(a.dir, "truncated.trace"), "wb").write(data[: recs[-1]["at"] + recs[-1]["bytes"] // 2])
        open(os.path.join(a.dir, "version.trace"), "wb").write(data[:8] + struct.pack("<I", 3) + data[12:])
        open(os.path.join(a.dir, "v1.trace"), "wb").write(downgrade(recs))
        version1(a, trace, os.path.join(a.dir, "v1.trace"), graph, opts, *last)
        x0 = recs[-1]["at"] + CYCLE.size + 24 * recs[-1]["P"] + 9
        open(os.path.join(a.dir, "nan_centre.trace"), "wb").write(data[:x0] + struct.pack("<f", float("nan")) + data[x0 + 4:])


def carry(a, trace, graph, recs, lines):
    """-trace_split carry at the app's rank count is the split the app
    really had: where the app applied sfc's cuts after cycle c-1, cycle c's
    recorded split, exactly where no cut splits a family of leaves; the app
    moves a cut that does (p4est_partition_for_coarsening) by up to 2^dim - 1
    cells, whose children the adaptation may refine: there within
    2^dim (2^dim - 1) cells."""
    dim = recs[0]["dim"]
    tol, exact, checked = (1 << dim) * ((1 << dim) - 1), 0, 0
    for before, rec, line in zip(recs, recs[1:], lines):
        if not (before["flags"] & 1) or line["lb_decision"] not in ("rebalance", "gain", "always"):
            continue
        whole = not any(splits_family(before, sum(line["lb_cut_cells"][:q])) for q in range(1, a.ranks))
        r = lbbench_json(a, ["-chain", "-graph", "%s:%d" % (graph, a.ranks), "-scenario", "trace:%s:%d" % (trace, rec["cycle"]),
                             "-lb_method", "sfc"])
        assert r["trace_split"] == "carry", r["trace_split"]
        app = [b - f for f, b in zip(rec["first"], rec["first"][1:] + [rec["N"]])]
        cuts = [sum(r["start_cells"][:q]) - sum(app[:q]) for q in range(1, a.ranks)]
        assert all(abs(c) <= (0 if whole else tol) for c in cuts), "cycle %d: carry starts %s, the app had %s" % (rec["cycle"], r["start_cells"], app)
        exact += whole
        checked += 1
    assert checked >= 1, "carry: no cycle after an applied sfc cut"
    print("carry: the app's split after its sfc cuts in %d cycles (%d with no family cut: exact; the rest within %d cells)" % (checked, exact, tol))


def splits_family(rec, k):
    """Whether the cut before cell k of rec parts a family of 2^dim leaves."""
    dim, m = rec["dim"], 1 << rec["dim"]
    pos, L = rec["pos"], MAXLEVEL[rec["dim"]]
    if k <= 0 or k >= rec["N"]:
        return False
    t, level, x = pos[k]
    if level == 0:
        return False
    parent = lambda c: (c[0], c[1], tuple(v >> (L - c[1] + 1) for v in c[2]))
    first = k - (morton(dim, x) >> (dim * (L - level))) % m  # the family's first child, were it one
    return first < k and first >= 0 and first + m <= rec["N"] and all(parent(pos[j]) == parent(pos[k]) for j in range(first, first + m))


def refine(a, trace, graph, rec, line):
    """-refine 1: 2^dim times the cells, the same total weight, and from the
    app's split the app's cuts 2^dim times as many cells (sfc cuts between
    cells of equal weight: each parent's children in one part)."""
    m = 1 << rec["dim"]
    r0, r1 = (lbbench_json(a, ["-chain", "-graph", "%s:%d" % (graph, a.ranks), "-scenario", "trace:%s:%d" % (trace, rec["cycle"]),
                               "-lb_method", "sfc", "-trace_split", "app", "-refine", str(k)]) for k in (0, 1))
    assert r1["cells"] == m * r0["cells"] == m * rec["N"] and r1["refine"] == 1, (r0["cells"], r1["cells"])
    assert r1["start_cells"] == [m * c for c in r0["start_cells"]], (r0["start_cells"], r1["start_cells"])
    print("refine 1: %d cells become %d, the app's split refined with them" % (rec["N"], r1["cells"]))


def version1(a, trace, old, graph, opts, rec, line):
    """A version 1 trace (the same cycles without positions) replays as
    the version 2 one does from the app's split."""
    got = [lbbench_json(a, ["-chain", "-graph", "%s:%d" % (graph, a.ranks), "-scenario", "trace:%s:%d" % (f, rec["cycle"]),
                            "-trace_split", "app"] + opts) for f in (trace, old)]
    assert got[0]["part_cells"] == got[1]["part_cells"] == line["lb_cut_cells"], (got, line["lb_cut_cells"])
    print("version 1: cycle %d replays as in version 2" % rec["cycle"])


def lbbench_json(a, cmd):
    out = os.path.join(a.dir, "replay.jsonl")
    if os.path.exists(out):
        os.remove(out)
    run([a.lbbench, "-virtual", "-json", out] + cmd)
    return json.loads(open(out).read())


def replicate(a, trace, opts, graph, rec, line):
    R = a.replicate
    r = lbbench_json(a, ["-chain", "-graph", "%s:%d" % (graph, R * a.ranks), "-scenario", "trace:%s:%d" % (trace, rec["cycle"]),
                         "-replicate", str(R), "-trace_split", "app"] + opts)
    assert r["part_cells"] == line["lb_cut_cells"] * R, (r["part_cells"], line["lb_cut_cells"])
    print("replicate %d: the app's cuts %d times" % (R, R))


def tasks(a, trace, rec, line):
    dim = rec["dim"]
    graph = "mesh%dd:%s" % (dim, "x".join(["2"] * dim))
    for m in ("diffusion", "zoltan-rcb"):
        r = lbbench_json(a, ["-tasks", "trace", "-graph", graph, "-scenario", "trace:%s:%d" % (trace, rec["cycle"]), "-lb_method", m,
                             "-lb_target", "0.99"])
        assert r["valid"] and r["ntasks"] == rec["N"], r
        if m.startswith("zoltan"):
            assert r["imbalance"] < 0.05, r["imbalance"]
        print("tasks: %s on %s, %d tasks, imbalance %.4g after migration" % (m, graph, r["ntasks"], r["imbalance"]))


def units(w):
    """The tasks' weights as lbbench gives them: whole units of 1/1000 of
    the mean cell weight, at least one (tracebench.c task_units)."""
    total = 0.0
    for x in w:
        total += x
    unit = total / (len(w) * 1000) if total > 0 else 1.0
    return [max(1.0, float(round(x / unit))) for x in w]


def mesh_tasks(a, args):
    os.makedirs(a.dir, exist_ok=True)
    # the forest's face-neighbour pairs, counted by p4est_mesh
    out = run([a.adjacency, a.mesh, str(a.level), a.dir])
    words = out.split("adjacency check passed: ")[1].split()
    ncells, pairs = int(words[0]), int(words[words.index("neighbour") - 1])
    dim = 3 if a.amr.endswith("3d") else 2
    adj = os.path.join(a.dir, "adjacency%dd_np1.trace" % dim)
    r = lbbench_json(a, ["-tasks", "trace", "-scenario", "trace:" + adj, "-mesh", a.mesh, "-graph", "subdomains:8", "-lb_method", "diffusion",
                         "-lb_target", "0.99", "-lb_max_iters", "1000"])
    assert r["ntasks"] == ncells and r["task_edges"] == pairs, "task edges %d, the forest's face-neighbour pairs %d" % (r["task_edges"], pairs)
    assert r["load_total_initial"] == r["load_total"] == 1000 * ncells and r["valid"], r
    print("mesh: %d tasks with %d edges, p4est_mesh's face-neighbour pairs" % (ncells, pairs))
    # the app's run: its measured subdomain graph and edge cut
    trace, report = os.path.join(a.dir, "mesh.trace"), os.path.join(a.dir, "mesh.jsonl")
    for f in (trace, report):
        if os.path.exists(f):
            os.remove(f)
    run(mpi(a, a.ranks) + [a.amr] + args + ["-mesh", a.mesh, "-lb_method", "none", "-trace_loads", trace, "-report", report])
    lines = [json.loads(x) for x in open(report)]
    recs = read_trace(trace)
    assert [r["cycle"] for r in recs] == [l["cycle"] for l in lines]
    for rec, line in zip(recs, lines):
        assert not line["rebalanced"]
        r = lbbench_json(a, ["-tasks", "trace", "-scenario", "trace:%s:%d" % (trace, rec["cycle"]), "-mesh", a.mesh, "-graph",
                             "subdomains:%d" % a.ranks, "-trace_split", "app", "-lb_method", "second-order", "-lb_target", "0.999",
                             "-lb_max_iters", "2000"])
        before = line["comm_edges"] - line["comm_edges_added"] + line["comm_edges_removed"]
        cut = round(r["initial_edgecut_tot"] * r["task_edges"])
        total = sum(units(rec["w"]))
        got, want = (r["ntasks"], r["subdomain_edges"], cut, r["load_total_initial"]), (rec["N"], before, line["edge_cut"], total)
        assert got == want, "cycle %d: lbbench (tasks, subdomain edges, cut task edges, weight) %s, the app and the trace %s" % (rec["cycle"], got, want)
        assert r["load_total"] == total and r["subdomain_degree_mean"] == 2.0 * before / a.ranks, r
        print("cycle %d: %d tasks, %d task edges, subdomain graph of %d edges (diameter %d), %d cut task edges, weight %g: the app's" % (
            rec["cycle"], rec["N"], r["task_edges"], before, r["subdomain_diameter"], cut, total))
    # the carried start at 2 and 4 ranks: the backends agree
    # the cycle that refined most: its carried start is the least balanced
    last = max(recs[1:], key=lambda x: x["N"] / recs[recs.index(x) - 1]["N"])["cycle"]
    for P in (2, 4):
        cmd = ["-tasks", "trace", "-scenario", "trace:%s:%d" % (trace, last), "-mesh", a.mesh, "-graph", "subdomains:%d" % P, "-lb_method",
               "second-order", "-lb_target", "0.999", "-lb_max_iters", "2000", "-select_passes", "3"]
        got = []
        for backend in ("virtual", "mpi"):
            out = os.path.join(a.dir, "replay.jsonl")
            if os.path.exists(out):
                os.remove(out)
            run(([a.lbbench, "-virtual"] if backend == "virtual" else mpi(a, P) + [a.lbbench]) + cmd + ["-json", out])
            got.append(json.loads(open(out).read()))
        timing = ("backend", "runtime_s", "setup_s", "select_s")
        diff = {k: (got[0][k], got[1].get(k)) for k in got[0] if k not in timing and got[0][k] != got[1].get(k)}
        assert not diff, "subdomains:%d, virtual against MPI: %s" % (P, diff)
        r = got[0]
        assert r["trace_split"] == "carry" and r["valid"] and r["load_total"] == r["load_total_initial"], r
        assert r["migrated_weight"] >= r["migration_lower_bound"] - 1e-9 * r["load_total"], r
        assert r["migrated_tasks"] > 0 and r["imbalance"] < r["initial_imbalance"], r
        print("carry at %d ranks: start imbalance %.4g -> %.4g, subdomain graph mean degree %g, diameter %d, migrated weight %g (lower bound %g), "
              "edge cut %.4g of %d task edges: the same on the virtual backend and %d MPI ranks" % (
                  P, r["initial_imbalance"], r["imbalance"], r["subdomain_degree_mean"], r["subdomain_diameter"], r["migrated_weight"],
                  r["migration_lower_bound"], r["edgecut_tot"], r["task_edges"], P))
    print("mesh check passed")


def restart(a, args):
    os.makedirs(a.dir, exist_ok=True)
    straight, traced, ck = (os.path.join(a.dir, f) for f in ("straight.trace", "restart.trace", "ck"))
    run(mpi(a, a.ranks) + [a.amr] + args + ["-trace_loads", straight])
    run(mpi(a, a.ranks) + [a.amr] + args + ["-trace_loads", traced, "-checkpoint", ck, "-checkpoint_interval", "2"])
    before = read_trace(traced)
    run(mpi(a, a.ranks) + [a.amr, "-restart", ck])
    s, r = read_trace(straight), read_trace(traced)
    assert [x["cycle"] for x in r] == [x["cycle"] for x in s], ([x["cycle"] for x in r], [x["cycle"] for x in s])
    for x, y in zip(r, s):
        assert (x["N"], x["first"], x["w"], x["cells"]) == (y["N"], y["first"], y["w"], y["cells"]), "cycle %d differs" % x["cycle"]
    print("restart: %d cycles before the restart, %d after it, each once and as in the straight run" % (len(before), len(r)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["roundtrip", "restart", "mesh"])
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--amr", required=True)
    p.add_argument("--lbbench")
    p.add_argument("--dir", required=True)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--damage", action="store_true")
    p.add_argument("--replicate", type=int, default=1)
    p.add_argument("--tasks", action="store_true")
    p.add_argument("--mesh")
    p.add_argument("--adjacency")
    p.add_argument("--level", type=int, default=0)
    a, rest = p.parse_known_args()
    args = rest[1:] if rest[:1] == ["--"] else rest
    {"roundtrip": roundtrip, "restart": restart, "mesh": mesh_tasks}[a.mode](a, args)


if __name__ == "__main__":
    main()
