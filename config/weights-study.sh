#!/bin/sh
# The weights study: count, timing and measured weights, each
# REPEAT times, on reactive-transport and on darcy-transport, then the
# figures.
#
#   config/weights-study.sh [-n RANKS] [-r REPEAT] [-b BUILD] [-o OUTDIR] [-- AMR2D OPTIONS...]
#
# reactive-transport runs config/reactive-transport.opts with -lb_weights
# count, timing and measured; darcy-transport runs
# config/lb-darcy-transport.opts with count and timing (it cannot time its
# cells) and -lb_method sfc, as the reactive runs.  The modes alternate
# within each repetition, so a change of the machine's load falls on all of
# them.  Arguments after -- go to every run (e.g. -t_final 0.05).  Reports
# go to OUTDIR/PROBLEM-WEIGHTS-K.jsonl; postprocess/weights_study.py then
# writes OUTDIR/weights-study.md and its plots, and postprocess/cycle_plots.py
# the per-cycle plots of the first repetition into OUTDIR/reactive and
# OUTDIR/darcy, from these reports alone (other files in OUTDIR are neither
# read nor removed).  The first run that fails stops the script with its
# error line; each run's output is in OUTDIR/PROBLEM-WEIGHTS-K.log.  Runs
# from any folder: BUILD defaults to the build/ beside
# config/, and BUILD and OUTDIR given here are relative to the current
# folder.  MPIEXEC (default "mpiexec --oversubscribe") and PYTHON (default
# /usr/bin/python3) can be set in the environment.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prog=$(basename "$0")
. "$root/config/runs.sh"
ranks=2 repeat=3 build=$root/build out=weights-study
usage="usage: $prog [-n RANKS] [-r REPEAT] [-b BUILD] [-o OUTDIR] [-- AMR2D OPTIONS...]"
while getopts n:r:b:o:h flag; do
  case $flag in
    n) ranks=$OPTARG ;;
    r) repeat=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    h) echo "$usage"; exit 0 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
amr=$build/bin/amr2d
mpi=${MPIEXEC:-mpiexec --oversubscribe}
python=${PYTHON:-/usr/bin/python3}
case $repeat in '' | *[!0-9]* | 0) fail "option -r $repeat: must be a positive whole number" ;; esac
[ -x "$amr" ] || fail "$amr not found (build first, or give -b BUILD)"
mkdir -p "$out" || fail "cannot create $out"
# the reports this run writes, one a line: the only ones read
reports=
run() {  # NAME OPTS WEIGHTS K [AMR2D OPTIONS...]
  name=$1 opts=$2 w=$3 k=$4
  shift 4
  echo "== $name, $w weights, run $k, $ranks ranks"
  # shellcheck disable=SC2086
  run_logged "$name-$w-$k" "$out/$name-$w-$k.log" $mpi -n "$ranks" "$amr" -options_file "$opts" -lb_method sfc -lb_weights "$w" \
    -report "$out/$name-$w-$k.jsonl" "$@"
  reports="$reports$out/$name-$w-$k.jsonl
"
}
k=1
while [ "$k" -le "$repeat" ]; do
  for w in count timing measured; do run reactive "$root/config/reactive-transport.opts" "$w" "$k" "$@"; done
  for w in count timing; do run darcy "$root/config/lb-darcy-transport.opts" "$w" "$k" "$@"; done
  k=$((k + 1))
done
IFS='
'
# shellcheck disable=SC2086
set -- $reports
"$python" "$root/postprocess/weights_study.py" -o "$out" "$@"
"$python" "$root/postprocess/cycle_plots.py" -o "$out/reactive" "$out/reactive-count-1.jsonl" "$out/reactive-timing-1.jsonl" \
  "$out/reactive-measured-1.jsonl" > /dev/null
"$python" "$root/postprocess/cycle_plots.py" -o "$out/darcy" "$out/darcy-count-1.jsonl" "$out/darcy-timing-1.jsonl" > /dev/null
