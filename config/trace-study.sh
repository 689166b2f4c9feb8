#!/bin/sh
# Every method on the app's real loads at P = 64 ... 131072 virtual ranks.
#
#   config/trace-study.sh [-b BUILD] [-o OUTDIR] [-n RANKS] [-k] [-A] [-P "64 128 ..."] [-c CELLS] [-t TARGET] [-i ITERS] [-m "METHODS"]
#                         [-M GB] [-s "STUDIES"] [-- AMR OPTIONS...]
#
# 1. records two large runs on RANKS ranks (default 2) with -lb_method sfc
#    -lb_weights phases, -trace_loads OUTDIR/{darcy2d,fichera3d}.trace and
#    -report OUTDIR/{darcy2d,fichera3d}.jsonl and the options after --:
#    darcy-transport (config/darcy-transport.opts) at levels 10 and 11, 4
#    cycles, about 1.05 million cells, and the Fichera corner
#    (config/fichera.opts) with Q1 from level 3, 4 cycles, up to 2.56
#    million cells (-k: keep those of an earlier study);
# 2. replays cycle 2 of each, the last the app balanced (the one whose
#    cells the adaptation after cycle 1 made), at every P: starting from
#    cycle 1's balanced split at P carried to cycle 2's cells
#    (-trace_split carry: what an app at P ranks starts from), every
#    recorded cell refined K times (-refine K: K the nearest to about
#    CELLS cells per rank, default 1000, never below the recording, and
#    lowered until the refined curve fits GB gigabytes, default 12), in
#    chain mode on line:P for every method, and in task mode (the cells
#    as tasks, their true face neighbours as task edges, rebuilt on the
#    recording's coarse mesh with -mesh; the parts of the carried split
#    as the ranks, -graph subdomains:P, the ranks whose parts share a
#    face) for every method that runs on a general graph, HierSFC and the
#    exact partition (hiersfc, sfc-exact: the tasks cut along the app's
#    curve) and the Zoltan baselines, about CELLS/10 tasks per rank, with
#    Lieber et al.'s one pass of task selection and with passes until no
#    task moves (tasks hop, -select_passes 50; not for tree, whose
#    transfers need none, nor for the cuts, whose tasks move once);
# 3. the synthetic cases beside them: Lieber et al. 2016's POINT and BOX
#    in task mode at 2048 ranks (mesh3d:16x16x8, 8x8x8 tasks per rank),
#    BOX also at 1024, 4096 and 8192 ranks (its scaling, Fig. 3),
#    and a non-local imbalance on the line of ranks (the first 5% of the
#    ranks carry twice the others' load, rank loads on line:P) at P up to
#    2048 with up to 10 P^2 iterations: what diffusion on a line costs
#    when the load must cross it;
# 4. postprocess/trace_study.py draws iterations, migration, imbalance after
#    balancing and the modelled time (rounds x latency + bytes / bandwidth)
#    against P (one line per method) and writes OUTDIR/table.md: at 2048
#    ranks, every method on POINT, BOX and the two recordings.
# Iterative methods stop at avg/max TARGET (default 0.999, Lieber et al.
# 2016's) or after ITERS iterations (default 1000; the JSON's stop_reason
# says which); the runs this machine cannot hold or time (cap() below)
# stop at a smaller P unless -A.  -s runs only some of the studies
# (default "chain tasks synthetic line": chain mode, task mode, POINT and
# BOX, the non-local line case), so a larger P can be added in one mode.
# Results: OUTDIR/chain.jsonl, OUTDIR/tasks.jsonl, OUTDIR/synthetic.jsonl, OUTDIR/line.jsonl,
# OUTDIR/*.png, OUTDIR/table.md (a study replaces its own .jsonl, to which
# lbbench appends; it removes nothing else).  The first run that fails
# stops the study with its error line (each run's output: OUTDIR/NAME.log).
# Runs from any folder: BUILD defaults to the build/ beside config/, and
# BUILD and OUTDIR given here are relative to the current folder.  MPIEXEC
# (default "mpiexec --oversubscribe") and PYTHON (default /usr/bin/python3)
# can be set in the environment.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prog=$(basename "$0")
. "$root/config/runs.sh"
build=$root/build out=trace-study ranks=2 cells=1000 iters=1000 target=0.999 keep=0 all=0 mem=12 studies="chain tasks synthetic line"
sizes="64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072"
methods="sfc hiersfc sfc-exact diffusion second-order chebyshev dimension-exchange multilevel tree ripple-tortoise ripple-hare"
usage="usage: $prog [-b BUILD] [-o OUTDIR] [-n RANKS] [-k] [-A] [-P SIZES] [-c CELLS] [-t TARGET] [-i ITERS] [-m METHODS] [-M GB] [-s STUDIES] [-- AMR OPTIONS...]"
while getopts b:o:n:kAP:c:t:i:m:M:s:h flag; do
  case $flag in
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    n) ranks=$OPTARG ;;
    k) keep=1 ;;
    A) all=1 ;;
    P) sizes=$OPTARG ;;
    c) cells=$OPTARG ;;
    t) target=$OPTARG ;;
    i) iters=$OPTARG ;;
    m) methods=$OPTARG ;;
    M) mem=$OPTARG ;;
    s) studies=$OPTARG ;;
    h) echo "$usage"; exit 0 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
for s in $studies; do
  case $s in chain|tasks|synthetic|line) ;; *) fail "-s '$studies': expected chain, tasks, synthetic or line, not '$s'" ;; esac
done
[ -n "$studies" ] || fail "-s: give at least one of chain, tasks, synthetic, line"
# whether study $1 runs
runs() { case " $studies " in *" $1 "*) return 0 ;; esac; return 1; }
mpi=${MPIEXEC:-mpiexec --oversubscribe}
python=${PYTHON:-/usr/bin/python3}
lbbench=$build/bin/lbbench
for exe in amr2d amr3d lbbench; do
  [ -x "$build/bin/$exe" ] || fail "$build/bin/$exe not found (build first, or give -b BUILD)"
done
mkdir -p "$out" || fail "cannot create $out"
rm -f "$out"/chain.jsonl "$out"/tasks.jsonl "$out"/synthetic.jsonl "$out"/line.jsonl
if [ "$keep" = 1 ]; then
  for t in darcy2d fichera3d; do
    [ -r "$out/$t.trace" ] && [ -r "$out/$t.jsonl" ] || fail "-k: $out/$t.trace or $out/$t.jsonl missing"
  done
else
  echo "== recording darcy-transport (2D, about 1.05 million cells) and fichera (3D Poisson, up to 2.56 million) on $ranks ranks"
  # shellcheck disable=SC2086
  run_logged darcy2d "$out/darcy2d.log" $mpi -n "$ranks" "$build/bin/amr2d" -options_file "$root/config/darcy-transport.opts" \
    -amr_min_level 10 -amr_max_level 11 -amr_cycles 4 -t_final 1 -lb_method sfc -lb_weights phases \
    -report "$out/darcy2d.jsonl" -trace_loads "$out/darcy2d.trace" "$@"
  # shellcheck disable=SC2086
  run_logged fichera3d "$out/fichera3d.log" $mpi -n "$ranks" "$build/bin/amr3d" -options_file "$root/config/fichera.opts" \
    -degree 1 -amr_min_level 3 -amr_cycles 4 -lb_method sfc -lb_weights phases \
    -report "$out/fichera3d.jsonl" -trace_loads "$out/fichera3d.trace" "$@"
fi

# The cells of the replayed cycle: the split the app chose in cycle 2
# (the report's rank_cells: their mean over the ranks, times the ranks)
# holds them.
cycle=2
trace_cells() {
  "$python" -c "
import json, sys
r = next(r for r in map(json.loads, open(sys.argv[1])) if r['cycle'] == int(sys.argv[2]))
print(round(r['rank_cells']['mean'] * r['ranks']))" "$1" "$cycle"
}
# The refinements for about CELLS cells per rank at P ranks: the nearest
# K >= 0 to log_{2^D}(P CELLS / N), lowered while the refined curve (about
# BYTES a cell: 130 in chain mode, 280 (2D) and 302 (3D) a task in task
# mode, measured) would pass GB gigabytes.
refinements() {  # N D P CELLS BYTES
  "$python" -c "
import math, sys
n, d, P, cells, bytes, gb = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
k = max(0, round(math.log(P * cells / n, 2 ** d))) if P * cells > n else 0
while k > 0 and n * 2 ** (d * k) * bytes > gb * 2 ** 30:
    k -= 1
print(k)" "$1" "$2" "$3" "$4" "$5" "$mem"
}
# The largest P of a run on this machine (2 cores, 24 GB), measured: Ripple
# takes 2P - 3 steps of P ranks on a line, and Hare's schedules per rank
# grow with the steps (309 s for Hare's whole run at 4096 ranks);
# chain-mode tree's time grows as P^2 (10 s of CPU at 16384 ranks); the
# non-local line case's iterations grow as P^2 and their cost as P^3
# (diffusion: 3.9 million iterations at 2048); zoltan-rcb and zoltan-hsfc
# partition for P parts in one process, in memory growing as P^2 (1.3 GB
# at 16384 ranks of darcy2d's tasks, ZOLTAN32K; about 66 GB at
# 131072), zoltan-graph took 76 s (2D) and 320 s (3D) at 16384.
# -A runs everything to the largest -P.
cap() {  # MODE METHOD
  [ "$all" = 1 ] && { echo 1073741824; return; }
  case $1:$2 in
    chain:ripple-*) echo 4096 ;;
    chain:tree) echo 32768 ;;
    line:*) echo 2048 ;;
    tasks:zoltan-graph) echo 16384 ;;
    tasks:zoltan-*) echo 32768 ;;
    *) echo 1073741824 ;;
  esac
}
stop="-lb_target $target -lb_max_iters $iters"
# what lbbench prints of a run: iterations, the cells' or the tasks' balance
shown='/iterations\|cells:\|after migration\|max\/avg/p'
# Lieber et al.'s POINT and BOX first, then every P in increasing order, so
# that a study cut short has its table and the smaller P complete.
# POINT and BOX at 2048 ranks (Lieber et al.'s Fig. 2), then BOX at 1024,
# 4096 and 8192 (its Fig. 3: the scaling), 8x8x8 tasks per rank
for case in point:16x16x8 box:16x16x8 box:16x8x8 box:16x16x16 box:32x16x16; do
  runs synthetic || break
  s=${case%%:*} mesh=${case#*:}
  for m in $methods zoltan-rcb zoltan-hsfc zoltan-graph; do
    case $m in sfc|multilevel|ripple-*) continue ;; esac
    echo "== $s tasks mesh3d:$mesh $m"
    # shellcheck disable=SC2086
    run_logged "$s-$mesh-$m" "$out/lbbench.log" "$lbbench" -virtual -tasks -graph "mesh3d:$mesh" -scenario "$s" -lb_method "$m" $stop -json "$out/synthetic.jsonl"
  done
done
for P in $sizes; do
  for spec in darcy2d:2:builtin:unit fichera3d:3:$root/meshes/fichera.inp; do
    t=${spec%%:*} rest=${spec#*:}
    dim=${rest%%:*} mesh=${rest#*:}
    n=$(trace_cells "$out/$t.jsonl")
    k=$(refinements "$n" "$dim" "$P" "$cells" 130)
    for m in $methods; do
      runs chain || break
      if [ "$P" -gt "$(cap chain "$m")" ]; then echo "== $t chain P=$P $m: skipped (above $(cap chain "$m"))"; continue; fi
      echo "== $t chain P=$P -refine $k $m"
      # shellcheck disable=SC2086
      run_logged "$t-chain-$P-$m" "$out/lbbench.log" "$lbbench" -virtual -chain -graph "line:$P" -scenario "trace:$out/$t.trace:$cycle" -refine "$k" \
        -lb_method "$m" $stop -json "$out/chain.jsonl"
    done
    kt=$(refinements "$n" "$dim" "$P" $((cells / 10)) $((dim == 2 ? 280 : 302)))
    for m in $methods zoltan-rcb zoltan-hsfc zoltan-graph; do
      # sfc and multilevel: chain mode only; Ripple's trees: not on a general graph
      case $m in sfc|multilevel|ripple-*) continue ;; esac
      runs tasks || break
      if [ "$P" -gt "$(cap tasks "$m")" ]; then echo "== $t tasks P=$P $m: skipped (above $(cap tasks "$m"))"; continue; fi
      # Lieber et al.'s one pass of task selection, and passes until no
      # task moves (tasks hop; at most 50) for the methods of flows (not
      # tree's transfers, the curve cuts' pieces or Zoltan's parts)
      passes=1
      case $m in zoltan-*|tree|hiersfc|sfc-exact) ;; *) passes="1 50" ;; esac
      for sp in $passes; do
        echo "== $t tasks P=$P -refine $kt $m -select_passes $sp"
        # shellcheck disable=SC2086
        run_logged "$t-tasks-$P-$m" "$out/lbbench.log" "$lbbench" -virtual -tasks trace -mesh "$mesh" -graph "subdomains:$P" \
          -scenario "trace:$out/$t.trace:$cycle" -refine "$kt" -lb_method "$m" $stop ${sp:+-select_passes $sp} -json "$out/tasks.jsonl"
      done
    done
  done
  if runs line && [ "$P" -le "$(cap line diffusion)" ]; then
    # the first 5% of the ranks (at least one) at twice the others' load
    "$python" -c "
import math, sys
P = int(sys.argv[1])
hot = max(1, math.ceil(0.05 * P))
print('\n'.join('2' if r < hot else '1' for r in range(P)))" "$P" > "$out/line-$P.loads"
    for m in diffusion second-order chebyshev dimension-exchange sfc; do
      echo "== non-local line P=$P $m"
      # shellcheck disable=SC2086
      run_logged "line-$P-$m" "$out/lbbench.log" "$lbbench" -virtual -graph "line:$P" -scenario "file:$out/line-$P.loads" -lb_method "$m" \
        -lb_target "$target" -lb_max_iters $((10 * P * P)) -json "$out/line.jsonl"
    done
  fi
done
# the reports of the studies that ran
set --
for f in chain tasks synthetic line; do
  if [ -r "$out/$f.jsonl" ]; then set -- "$@" "$out/$f.jsonl"; fi
done
"$python" "$root/postprocess/trace_study.py" -o "$out" "$@"
