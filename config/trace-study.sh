#!/bin/sh
# Every method on the app's real loads at P = 64 ... 131072 virtual ranks.
#
#   config/trace-study.sh [-b BUILD] [-o OUTDIR] [-n RANKS] [-k] [-A] [-P "64 128 ..."] [-c CELLS] [-t TARGET] [-i ITERS] [-m "METHODS"]
#                         [-- AMR OPTIONS...]
#
# 1. records a darcy-transport run (config/lb-darcy-transport.opts, amr2d)
#    and a 3D Poisson run (config/fichera.opts, amr3d) on RANKS ranks
#    (default 2) with -trace_loads OUTDIR/{darcy2d,fichera3d}.trace and
#    -report OUTDIR/{darcy2d,fichera3d}.jsonl and the options after -- (e.g.
#    -amr_cycles 3 for a short study; -k: keep those of an earlier study and
#    replay them again);
# 2. replays the last cycle of each at every P (default 64, 128, ...,
#    131072) with lbbench -virtual: chain mode (-chain on line:P, the trace
#    tiled along the curve to about CELLS cells per rank, default 1000) for
#    every method, and task mode (-tasks trace on a mesh2d/mesh3d of P
#    ranks, at least CELLS/10 tasks per rank, k^dim copies) for every method that runs on
#    meshes and the Zoltan baselines; iterative methods stop at avg/max
#    TARGET (default 0.999, Lieber et al. 2016's) or after ITERS iterations (default
#    1000; the JSON's stop_reason says which); the runs this machine cannot
#    hold or time (cap() below: Ripple, chain-mode tree, the Zoltan
#    baselines, 3D task mode) stop at a smaller P unless -A;
# 3. runs Lieber et al. 2016's POINT and BOX in task mode at 2048 ranks
#    (mesh3d:16x16x8, 8x8x8 tasks per rank) for the same methods;
# 4. postprocess/trace_study.py draws iterations, migration, imbalance and
#    run time against P (one line per method) and writes OUTDIR/table.md,
#    Lieber et al.'s Fig. 2 kind: 2048 ranks, POINT, BOX and the two real
#    workloads side by side.
# Results: OUTDIR/chain.jsonl, OUTDIR/tasks.jsonl, OUTDIR/synthetic.jsonl,
# OUTDIR/*.png, OUTDIR/table.md (a study replaces its own chain, tasks
# and synthetic .jsonl, to which lbbench appends; it removes nothing else).
# The first run that fails stops the study with its error line (each
# run's output: OUTDIR/NAME.log).  Runs from any folder: BUILD defaults to
# the build/ beside config/, and BUILD and OUTDIR given here are relative
# to the current folder.  MPIEXEC (default "mpiexec
# --oversubscribe") and PYTHON (default /usr/bin/python3) can be set in
# the environment.  The whole range took 14.7 minutes of CPU here, up to
# 3.1 GB in one run: start with -P "64 256 2048".
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prog=$(basename "$0")
. "$root/config/runs.sh"
build=$root/build out=trace-study ranks=2 cells=1000 iters=1000 target=0.999 keep=0 all=0
sizes="64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072"
methods="sfc diffusion second-order chebyshev dimension-exchange multilevel tree ripple-tortoise ripple-hare"
usage="usage: $prog [-b BUILD] [-o OUTDIR] [-n RANKS] [-k] [-A] [-P SIZES] [-c CELLS] [-t TARGET] [-i ITERS] [-m METHODS] [-- AMR OPTIONS...]"
while getopts b:o:n:kAP:c:t:i:m:h flag; do
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
    h) echo "$usage"; exit 0 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
mpi=${MPIEXEC:-mpiexec --oversubscribe}
python=${PYTHON:-/usr/bin/python3}
lbbench=$build/bin/lbbench
for exe in amr2d amr3d lbbench; do
  [ -x "$build/bin/$exe" ] || fail "$build/bin/$exe not found (build first, or give -b BUILD)"
done
mkdir -p "$out" || fail "cannot create $out"
rm -f "$out"/chain.jsonl "$out"/tasks.jsonl "$out"/synthetic.jsonl
if [ "$keep" = 1 ]; then
  for t in darcy2d fichera3d; do
    [ -r "$out/$t.trace" ] && [ -r "$out/$t.jsonl" ] || fail "-k: $out/$t.trace or $out/$t.jsonl missing"
  done
else
  echo "== recording darcy-transport (2D) and fichera (3D Poisson) on $ranks ranks"
  # shellcheck disable=SC2086
  run_logged darcy2d "$out/darcy2d.log" $mpi -n "$ranks" "$build/bin/amr2d" -options_file "$root/config/lb-darcy-transport.opts" \
    -report "$out/darcy2d.jsonl" -trace_loads "$out/darcy2d.trace" "$@"
  # shellcheck disable=SC2086
  run_logged fichera3d "$out/fichera3d.log" $mpi -n "$ranks" "$build/bin/amr3d" -options_file "$root/config/fichera.opts" -lb_method sfc \
    -report "$out/fichera3d.jsonl" -trace_loads "$out/fichera3d.trace" "$@"
fi

# The cells of a trace's last cycle, from its report's rank_cells.
trace_cells() {
  "$python" -c "import json,sys; print(sum(json.loads(open(sys.argv[1]).readlines()[-1])['rank_cells']))" "$1"
}
# A grid of P = 2^k ranks in D dimensions, as equal as the powers allow.
grid() {  # P D
  "$python" -c "
import sys
P, D = int(sys.argv[1]), int(sys.argv[2])
k = P.bit_length() - 1
e = [k // D + (i < k % D) for i in range(D)]
print('mesh%dd:%s' % (D, 'x'.join(str(2 ** x) for x in e)))" "$1" "$2"
}
# The least k^D at or above N: task mode tiles the copies in a k x k (x k)
# grid (a prime number of copies would be one long strip).
tiles() {  # N D
  k=1
  while :; do
    p=1 i=0
    while [ $i -lt "$2" ]; do p=$((p * k)) i=$((i + 1)); done
    [ $p -ge "$1" ] && break
    k=$((k + 1))
  done
  echo $p
}
# The largest P of a run on this machine (2 cores, at most 4 GiB a run),
# measured: Ripple's tables grow as P^2 (line:8192 and mesh2d:256x128
# would need more than 2^27 entries); chain-mode tree's time grows as P^2
# (10 s of CPU at 16384 ranks); zoltan-rcb and zoltan-hsfc hold 1.4 GB at
# 16384 ranks (a study with them at 32768 peaked at 5.1 GB), zoltan-graph
# takes 68 s of CPU there, growing faster than P;
# a 3D trace at 131072 ranks is 17.6 million tasks, over 4 GB.  -A runs
# everything to the largest -P.
cap() {  # MODE DIM METHOD
  [ "$all" = 1 ] && { echo 1073741824; return; }
  case $1:$2:$3 in
    chain:*:ripple-*) echo 4096 ;;
    chain:*:tree) echo 32768 ;;
    tasks:*:ripple-*) echo 16384 ;;
    tasks:*:zoltan-graph) echo 8192 ;;
    tasks:*:zoltan-*) echo 16384 ;;
    tasks:3:*) echo 65536 ;;
    *) echo 1073741824 ;;
  esac
}
stop="-lb_target $target -lb_max_iters $iters"
# what lbbench prints of a run: iterations, the cells' or the tasks' balance
shown='/iterations\|cells:\|after migration/p'
# Lieber et al.'s POINT and BOX first, then every P in increasing order, so
# that a study cut short has its table and the smaller P complete.
for s in point box; do
  for m in $methods zoltan-rcb zoltan-hsfc zoltan-graph; do
    case $m in sfc|multilevel|ripple-*) continue ;; esac
    echo "== $s tasks P=2048 $m"
    # shellcheck disable=SC2086
    run_logged "$s-$m" "$out/lbbench.log" "$lbbench" -virtual -tasks -graph mesh3d:16x16x8 -scenario "$s" -lb_method "$m" $stop -json "$out/synthetic.jsonl"
  done
done
for P in $sizes; do
  for spec in darcy2d:2 fichera3d:3; do
    t=${spec%:*} dim=${spec#*:}
    n=$(trace_cells "$out/$t.jsonl")
    r=$(( (P * cells + n - 1) / n ))
    rt=$(tiles $(( (P * cells / 10 + n - 1) / n )) "$dim")
    for m in $methods; do
      if [ "$P" -gt "$(cap chain "$dim" "$m")" ]; then echo "== $t chain P=$P $m: skipped (above $(cap chain "$dim" "$m"))"; continue; fi
      echo "== $t chain P=$P x$r $m"
      # shellcheck disable=SC2086
      # the tiled study as measured: the app's split tiled (lbbench's default is now carry)
      run_logged "$t-chain-$P-$m" "$out/lbbench.log" "$lbbench" -virtual -chain -graph "line:$P" -scenario "trace:$out/$t.trace" -replicate "$r" \
        -trace_split app -lb_method "$m" $stop -json "$out/chain.jsonl"
    done
    for m in $methods zoltan-rcb zoltan-hsfc zoltan-graph; do
      # sfc and multilevel: chain mode only; Ripple's trees: not on mesh3d
      case $dim:$m in *:sfc|*:multilevel|3:ripple-*) continue ;; esac
      if [ "$P" -gt "$(cap tasks "$dim" "$m")" ]; then echo "== $t tasks P=$P $m: skipped (above $(cap tasks "$dim" "$m"))"; continue; fi
      echo "== $t tasks P=$P x$rt $m"
      # shellcheck disable=SC2086
      run_logged "$t-tasks-$P-$m" "$out/lbbench.log" "$lbbench" -virtual -tasks trace -graph "$(grid "$P" "$dim")" -scenario "trace:$out/$t.trace" \
        -replicate "$rt" -lb_method "$m" $stop -json "$out/tasks.jsonl"
    done
  done
done
"$python" "$root/postprocess/trace_study.py" -o "$out" "$out"/chain.jsonl "$out"/tasks.jsonl "$out"/synthetic.jsonl
