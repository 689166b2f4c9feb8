#!/bin/sh
# The Poisson benchmark: the adaptive Q1/Q2 cycles in 2D and 3D with each
# operator/preconditioner pair, repeated, then the per-cycle tables.
#
#   config/poisson-bench.sh [-n RANKS] [-r REPEAT] [-b BUILD] [-o OUTDIR]
#                           [-d DIMS] [-k DEGREES] [-c CYCLES2D] [-C CYCLES3D]
#                           [-p PAIRS] [-- AMR OPTIONS...]
#
# 2D is deal.II step-40's interface problem (amr2d, config/interface.opts),
# 3D the Fichera corner (amr3d, config/fichera.opts); each runs with
# -degree 1 and 2 (DEGREES, default 1,2) for CYCLES2D (default 6) and
# CYCLES3D (default 4) adaptive cycles, once per pair of
# -poisson_operator and -poisson_pc (PAIRS, default all four:
# assembled:amg,assembled:mg,matrix-free:amg,matrix-free:mg), on RANKS
# ranks (default 2), REPEAT times (default 3; the pairs alternate within a
# repetition, so a change of the machine's load falls on all of them).
# Larger problems: more cycles (each cycle multiplies the cells by about 2
# in 2D and 3 in 3D; -c 8 is step-40's own run, -C 7 reaches about 1.2M
# DoFs in 3D Q2).  Arguments after -- go to every run.
#
# Reports go to OUTDIR/DIMd-qDEGREE-OPERATOR-PC-K.jsonl (each run's output
# to the .log beside it), then postprocess/poisson_bench.py prints per
# cycle the cells, DoFs, CG iterations, the phases' wall times, us per
# active cell and the peak memory per rank as medians of the repetitions
# with their spread, and writes OUTDIR/poisson-bench.md, .csv, .json and
# .png; OUTDIR/machine.txt holds the processor and the load average at the
# start and the end; only this run's reports are read, and other files in
# OUTDIR are not removed.  The first run that fails stops the script with
# its error line.  Runs from any folder: BUILD defaults to the build/ beside
# config/, and BUILD and OUTDIR given here are relative to the current
# folder.  MPIEXEC (default "mpiexec --oversubscribe") and PYTHON (default
# /usr/bin/python3) can be set in the environment.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prog=$(basename "$0")
ranks=2 repeat=3 build=$root/build out=poisson-bench dims=2,3 degrees=1,2 cycles2=6 cycles3=4
pairs=assembled:amg,assembled:mg,matrix-free:amg,matrix-free:mg
usage="usage: $prog [-n RANKS] [-r REPEAT] [-b BUILD] [-o OUTDIR] [-d DIMS] [-k DEGREES] [-c CYCLES2D] [-C CYCLES3D] [-p PAIRS] [-- AMR OPTIONS...]"
. "$root/config/runs.sh"
positive() {  # OPTION VALUE
  case $2 in '' | *[!0-9]* | 0*) fail "option $1 $2: must be a positive whole number" ;; esac
}
while getopts n:r:b:o:d:k:c:C:p:h flag; do
  case $flag in
    n) positive -n "$OPTARG"; ranks=$OPTARG ;;
    r) positive -r "$OPTARG"; repeat=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    d) dims=$OPTARG ;;
    k) degrees=$OPTARG ;;
    c) positive -c "$OPTARG"; cycles2=$OPTARG ;;
    C) positive -C "$OPTARG"; cycles3=$OPTARG ;;
    p) pairs=$OPTARG ;;
    h) echo "$usage"; exit 0 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
dims=$(echo "$dims" | tr ',' ' ')
degrees=$(echo "$degrees" | tr ',' ' ')
pairs=$(echo "$pairs" | tr ',' ' ')
[ -n "$dims" ] || fail "option -d: give 2, 3 or 2,3"
[ -n "$degrees" ] || fail "option -k: give 1, 2 or 1,2"
[ -n "$pairs" ] || fail "option -p: give OPERATOR:PC pairs"
for d in $dims; do
  case $d in 2 | 3) ;; *) fail "option -d $d: the dimension is 2 or 3" ;; esac
  [ -x "$build/bin/amr${d}d" ] || fail "$build/bin/amr${d}d not found (build first, or give -b BUILD)"
done
for k in $degrees; do
  case $k in 1 | 2) ;; *) fail "option -k $k: the degree is 1 or 2" ;; esac
done
for pair in $pairs; do
  case $pair in assembled:amg | assembled:mg | matrix-free:amg | matrix-free:mg) ;;
    *) fail "option -p $pair: a pair is assembled|matrix-free:amg|mg" ;;
  esac
done
mpi=${MPIEXEC:-mpiexec --oversubscribe}
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$out" || fail "cannot create $out"
# the reports this run writes, one a line: the only ones read
reports=
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores" > "$out/machine.txt"
echo "load average at the start: $(load)" >> "$out/machine.txt"
cat "$out/machine.txt"
k=1
while [ "$k" -le "$repeat" ]; do
  for d in $dims; do
    if [ "$d" = 2 ]; then opts=$root/config/interface.opts cycles=$cycles2; else opts=$root/config/fichera.opts cycles=$cycles3; fi
    for q in $degrees; do
      for pair in $pairs; do
        op=${pair%:*} pc=${pair#*:}
        name=${d}d-q$q-$op-$pc-$k
        printf '%s\n' "== ${d}D Q$q, $op + $pc, $ranks ranks, run $k of $repeat"
        # shellcheck disable=SC2086
        run_logged "$name" "$out/$name.log" $mpi -n "$ranks" "$build/bin/amr${d}d" -options_file "$opts" -degree "$q" \
          -amr_cycles "$cycles" -poisson_operator "$op" -poisson_pc "$pc" -report "$out/$name.jsonl" "$@" > /dev/null
        reports="$reports$out/$name.jsonl
"
      done
    done
  done
  k=$((k + 1))
done
echo "load average at the end: $(load)" | tee -a "$out/machine.txt"
IFS='
'
# shellcheck disable=SC2086
set -- $reports
"$python" "$root/postprocess/poisson_bench.py" -o "$out" "$@"
