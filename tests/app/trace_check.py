#!/usr/bin/env python3
"""The load trace (-trace_loads) against the app's report and lbbench.

roundtrip: run the app with ARGS -trace_loads DIR/good.trace -report
  DIR/run.jsonl on --ranks ranks; check the trace (one record per cycle in
  order, the cells of the adapted forest, the app's split) and replay every
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
  DIR/version.trace (format version 2), DIR/nan_centre.trace (the first
  cell of the last record with a NaN centre).

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

FILE = struct.Struct("<8s6I")
CYCLE = struct.Struct("<4s5iqq8x8d")


def read_trace(path):
    """Every cycle record of a trace: a dict of its fields and raw cells."""
    data = open(path, "rb").read()
    magic, version, dim, cb, chb, ntypes_max, _ = FILE.unpack_from(data, 0)
    assert magic == b"AMRTRACE" and version == 1 and dim in (2, 3), (magic, version, dim)
    assert cb == 9 + 4 * dim and chb == CYCLE.size and ntypes_max == 8
    at, out = FILE.size, []
    while at < len(data):
        tag, cycle, P, weights, ntypes, flags, N, nbytes, *cost = CYCLE.unpack_from(data, at)
        assert tag == b"CYCL" and nbytes == CYCLE.size + 24 * P + N * cb and at + nbytes <= len(data), (path, at)
        arr = at + CYCLE.size
        first = struct.unpack_from("<%dq" % P, data, arr)
        cells = data[arr + 24 * P: at + nbytes]
        weights_of_cells = [struct.unpack_from("<d", cells, i * cb)[0] for i in range(N)]
        out.append(dict(cycle=cycle, P=P, weights=weights, ntypes=ntypes, flags=flags, N=N, first=list(first),
                        cost=cost[:ntypes], w=weights_of_cells, cells=cells, at=at, bytes=nbytes, dim=dim))
        at += nbytes
    return out


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
    lines = [json.loads(x) for x in open(report)]
    recs = read_trace(trace)
    assert [r["cycle"] for r in recs] == [l["cycle"] for l in lines], "one trace record per reported cycle"
    method = lines[0]["lb_method"]
    graph = lines[0]["lb_graph"]
    opts = ["-lb_method", method, "-lb_target", app_option(args, "-lb_target", "0.99"),
            "-lb_max_iters", app_option(args, "-lb_max_iters", "1000"),
            "-lb_check_interval", app_option(args, "-lb_check_interval", "10")]
    replayed = shifted = 0
    for rec, line in zip(recs, lines):
        assert rec["P"] == a.ranks and rec["N"] > 0
        assert rec["weights"] == ["count", "timing", "model", "measured"].index(line["lb_weights"])
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
                   "-json", out] + opts
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
    last = [(rec, line) for rec, line in zip(recs, lines) if rec["flags"] & 1][-1]
    if a.replicate > 1:
        replicate(a, trace, opts, graph, *last)
    if a.tasks:
        tasks(a, trace, *last)
    size = os.path.getsize(trace)
    cells = sum(r["N"] for r in recs)
    print("round trip: %d of %d cycles replayed on %d ranks (%s, %dD): cuts, migrated cells and iterations identical; "
          "trace %d bytes for %d cells, %.1f bytes per cell" % (replayed, len(recs), a.ranks, method, recs[0]["dim"], size, cells, size / cells))
    if a.damage:
        data = open(trace, "rb").read()
        open(os.path.join(a.dir, "truncated.trace"), "wb").write(data[: recs[-1]["at"] + recs[-1]["bytes"] // 2])
        open(os.path.join(a.dir, "version.trace"), "wb").write(data[:8] + struct.pack("<I", 2) + data[12:])
        x0 = recs[-1]["at"] + CYCLE.size + 24 * recs[-1]["P"] + 9
        open(os.path.join(a.dir, "nan_centre.trace"), "wb").write(data[:x0] + struct.pack("<f", float("nan")) + data[x0 + 4:])


def lbbench_json(a, cmd):
    out = os.path.join(a.dir, "replay.jsonl")
    if os.path.exists(out):
        os.remove(out)
    run([a.lbbench, "-virtual", "-json", out] + cmd)
    return json.loads(open(out).read())


def replicate(a, trace, opts, graph, rec, line):
    R = a.replicate
    r = lbbench_json(a, ["-chain", "-graph", "%s:%d" % (graph, R * a.ranks), "-scenario", "trace:%s:%d" % (trace, rec["cycle"]),
                         "-replicate", str(R)] + opts)
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
    p.add_argument("mode", choices=["roundtrip", "restart"])
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--amr", required=True)
    p.add_argument("--lbbench")
    p.add_argument("--dir", required=True)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--damage", action="store_true")
    p.add_argument("--replicate", type=int, default=1)
    p.add_argument("--tasks", action="store_true")
    a, rest = p.parse_known_args()
    args = rest[1:] if rest[:1] == ["--"] else rest
    (roundtrip if a.mode == "roundtrip" else restart)(a, args)


if __name__ == "__main__":
    main()
