#!/bin/sh
# Run every balancing method on the same problem and write the plots.
#
#   config/compare-methods.sh [-n RANKS] [-r REPEAT] [-b BUILD] [-o OUTDIR] [-f OPTS] [-m METHODS] [-x] [-- AMR2D OPTIONS...]
#
# Runs BUILD/bin/amr2d -options_file OPTS (default: the lb-darcy-transport.opts
# beside this script) once with -lb_method none, once with sfc and count
# weights (the reference the timing weights are measured against), and once
# per registered method with the options file's weights (-m: only the
# methods in the comma-separated list METHODS, none among them if listed), REPEAT times each
# (default 1; the methods alternate within a repetition, so a change of the
# machine's load falls on all of them); arguments after -- go to every run
# (e.g. -t_final 0.05).  With -x (reactive-transport, -f
# config/reactive-transport.opts) every run is made twice, with the
# reaction offload (the default) and without it (-react_offload 0, reports
# OUTDIR/METHOD-WEIGHTS-home-K.jsonl), so that each method is compared with
# and without the reaction balanced apart from the mesh; the plots label
# the runs with it "+offload".  Reports go to OUTDIR/METHOD-WEIGHTS-K.jsonl, then
# postprocess/cycle_plots.py --repeats writes OUTDIR/*.png (medians of the
# repetitions with their spread) and OUTDIR/methods.md from these reports
# alone (other files in OUTDIR are neither read nor removed): the fastest
# method first, the rows sorted by median wall time [least, greatest], with
# the phase model's time, loss and mean I% (the I% imbalance.png ranks the
# methods by), the rebalances, cells migrated and balancing time.  The first run
# that fails stops the script with its error line; each run's output is in
# OUTDIR/METHOD-WEIGHTS-K.log.  Runs from any
# folder: BUILD defaults to the build/ beside config/, and BUILD, OPTS and
# OUTDIR given here are relative to the current folder.  MPIEXEC (default
# "mpiexec --oversubscribe") and PYTHON (default /usr/bin/python3) can be
# set in the environment.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prog=$(basename "$0")
. "$root/config/runs.sh"
ranks=4 repeat=1 build=$root/build out=compare opts=$root/config/lb-darcy-transport.opts home= only=
usage="usage: $prog [-n RANKS] [-r REPEAT] [-b BUILD] [-o OUTDIR] [-f OPTS] [-m METHODS] [-x] [-- AMR2D OPTIONS...]"
while getopts n:r:b:o:f:m:xh flag; do
  case $flag in
    n) ranks=$OPTARG ;;
    r) repeat=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    f) opts=$OPTARG ;;
    m) only=$OPTARG ;;
    x) home=1 ;;
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
[ -r "$opts" ] || fail "cannot read options file $opts"
mkdir -p "$out" || fail "cannot create $out"
# the registered methods, as the program lists them under -help
methods=$("$amr" -help | sed -n 's/^ *-lb_method <[^>]*> .*(choose one of) \(.*\) (None)$/\1/p')
[ -n "$methods" ] || fail "$amr -help lists no -lb_method values"
if [ -n "$only" ]; then
  for m in $(echo "$only" | tr , ' '); do
    case " $methods " in *" $m "*) ;; *) fail "option -m $only: '$m' is not a method of $amr (choose from $methods)" ;; esac
  done
  methods=$(echo "$only" | tr , ' ')
fi
weights=$(sed -n 's/^-lb_weights  *//p' "$opts")
weights=${weights:-count}
# the decision plot draws the options file's -lb_threshold floor
threshold=$(sed -n 's/^-lb_threshold  *//p' "$opts")
# the reports this run writes, one a line: the only ones plotted
reports=
run_one() {  # NAME METHOD WEIGHTS K [AMR2D OPTIONS...]
  name=$1 m=$2 w=$3 k=$4
  shift 4
  echo "== $name: $m with $w weights on $ranks ranks, run $k of $repeat"
  # shellcheck disable=SC2086
  run_logged "$name" "$out/$name.log" $mpi -n "$ranks" "$amr" -options_file "$opts" -lb_method "$m" -lb_weights "$w" \
    -report "$out/$name.jsonl" "$@"
  reports="$reports$out/$name.jsonl
"
}
run() {  # METHOD WEIGHTS K [AMR2D OPTIONS...]: with -x also without the offload
  run_one "$1-$2-$3" "$@"
  [ -z "$home" ] || run_one "$1-$2-home-$3" "$@" -react_offload 0
}
k=1
while [ "$k" -le "$repeat" ]; do
  for method in $methods; do
    if [ "$method" = none ]; then run none count "$k" "$@"; else run "$method" "$weights" "$k" "$@"; fi
  done
  [ "$weights" = count ] || run sfc count "$k" "$@"
  k=$((k + 1))
done
IFS='
'
# shellcheck disable=SC2086
set -- $reports
[ -z "$threshold" ] || set -- --threshold "$threshold" "$@"
"$python" "$root/postprocess/cycle_plots.py" --repeats -o "$out" "$@"
