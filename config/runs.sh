# Sourced by the scripts in config/: their error line and their runs.
# Needs prog (the script's name) set; run_logged stops the script at the
# first run that fails, with that run's own error line, so that a study
# never goes on to plot the reports of failed runs.

fail() { echo "$prog: error: $*" >&2; exit 2; }

# run_logged NAME LOG COMMAND...: COMMAND's output into LOG; when it
# succeeds, the lines of it the sed script $shown prints (default: the last,
# the run's summary).
run_logged() {
  rl_name=$1 rl_log=$2
  shift 2
  if "$@" > "$rl_log" 2>&1; then
    sed -n "${shown:-\$p}" "$rl_log"
  else
    rl_err=$(grep -m 1 'error' "$rl_log" || tail -n 1 "$rl_log")
    fail "the run $rl_name failed: $rl_err (its output: $rl_log)"
  fi
}
