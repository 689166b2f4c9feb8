#!/bin/sh
# Run every balancing method on the same problem and write the plots.
#
#   config/compare-methods.sh [-n RANKS] [-b BUILD] [-o OUTDIR] [-f OPTS] [-- AMR2D OPTIONS...]
#
# Runs build/bin/amr2d -options_file OPTS (default config/lb-darcy-transport.opts)
# once with -lb_method none, once with sfc and count weights (the reference
# the timing weights are measured against), and once per registered method
# with the options file's weights; arguments after -- go to every run (e.g.
# -t_final 0.05).  Reports go to OUTDIR/METHOD-WEIGHTS.jsonl, then
# postprocess/cycle_plots.py writes OUTDIR/*.png and OUTDIR/methods.md.
# MPIEXEC (default "mpiexec --oversubscribe") and PYTHON (default
# /usr/bin/python3) can be set in the environment.
set -eu
ranks=4 build=build out=compare opts=config/lb-darcy-transport.opts
while getopts n:b:o:f: flag; do
  case $flag in
    n) ranks=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    f) opts=$OPTARG ;;
    *) echo "usage: $0 [-n RANKS] [-b BUILD] [-o OUTDIR] [-f OPTS] [-- AMR2D OPTIONS...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
amr=$build/bin/amr2d
mpi=${MPIEXEC:-mpiexec --oversubscribe}
python=${PYTHON:-/usr/bin/python3}
[ -x "$amr" ] || { echo "$0: error: $amr not found (build first, or give -b BUILD)" >&2; exit 1; }
[ -r "$opts" ] || { echo "$0: error: cannot read options file $opts" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.jsonl
# the registered methods, as the program lists them under -help
methods=$("$amr" -help | sed -n 's/^ *-lb_method <[^>]*>: \(.*\) (None)$/\1/p' | tr -d ',')
[ -n "$methods" ] || { echo "$0: error: $amr -help lists no -lb_method values" >&2; exit 1; }
weights=$(sed -n 's/^-lb_weights  *//p' "$opts")
weights=${weights:-count}
run() {  # METHOD WEIGHTS [AMR2D OPTIONS...]
  m=$1 w=$2
  shift 2
  echo "== $m with $w weights on $ranks ranks"
  # shellcheck disable=SC2086
  $mpi -n "$ranks" "$amr" -options_file "$opts" -lb_method "$m" -lb_weights "$w" -report "$out/$m-$w.jsonl" "$@" | tail -n 1
}
for method in $methods; do
  if [ "$method" = none ]; then run none count "$@"; else run "$method" "$weights" "$@"; fi
done
[ "$weights" = count ] || run sfc count "$@"
"$python" postprocess/cycle_plots.py -o "$out" "$out"/*.jsonl
