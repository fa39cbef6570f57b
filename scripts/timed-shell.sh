#!/usr/bin/env bash
# make's SHELL for a timed run (.ci/run): each recipe line runs as under bash, and its seconds and
# text are appended to $STEP_TIMES. A line that runs a sub-make logs the sub-make's whole time.
start=$(date +%s%N)
bash "$@"
status=$?
if [ -n "${STEP_TIMES:-}" ]; then
  line=${*: -1}
  printf '%6d s  %s\n' $((($(date +%s%N) - start) / 1000000000)) "${line%%$'\n'*}" >>"$STEP_TIMES"
fi
exit $status
