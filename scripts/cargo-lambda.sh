#!/usr/bin/env bash
# The pinned cargo-lambda (scripts/requirements-sam.txt, installed into .venv-sam/ on first use),
# run in the current directory: for a function of your own crate against the emulators.
#   scripts/cargo-lambda.sh watch --env-file local.env
#   scripts/cargo-lambda.sh invoke --data-file events/sqs-standard.json your-function
# `watch` and `invoke` listen on and call 127.0.0.1 unless -A/--invoke-address says otherwise
# (cargo-lambda's own default for watch is every interface).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/sam.sh" install
export PATH="$root/.venv-sam/bin:$PATH"

command=${1:-}
[ -n "$command" ] || { echo "usage: $0 watch|invoke|build ARGS..." >&2; exit 2; }
shift
address=()
case "$command" in
  watch | invoke)
    case " $* " in
      *" -A "* | *" --invoke-address"*) ;;
      *) address=(-A 127.0.0.1) ;;
    esac
    ;;
esac
exec cargo lambda "$command" "${address[@]}" "$@"
