#!/usr/bin/env bash
# make invoke FUNCTION=publisher|consumer EVENT=events/<file>.json [KEEP=1]
# make invoke BINARY=path/to/your-function EVENT=events/<file>.json [ENV_FILE=yours.env] [KEEP=1]
# Runs one function on an event file against the emulators, with the resources it needs created
# first, and prints its response and, for a consumer, each message's outcome. Ours run through
# cargo-lambda (watch + invoke); a binary of yours (any Lambda function built for this machine)
# runs under lambda-invoke, this repository's Runtime API host, with the consumer's variables
# (QUARANTINE_QUEUE_URL, …) set as the stack sets them. Stops what it started (KEEP=1: the
# emulators stay up, queues inspectable).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: $0 publisher|consumer|PATH_TO_YOUR_BINARY EVENT_FILE"
function=${1:?$usage}
event=${2:?$usage}
yours=
case "$function" in
  publisher) binary=backlog-publisher ;;
  consumer) binary=batch-consumer ;;
  *)
    [ -f "$function" ] && [ -x "$function" ] || {
      echo "FUNCTION must be publisher or consumer, or BINARY a function binary you built; '$function' is neither" >&2
      exit 2
    }
    yours=$(cd "$(dirname "$function")" && pwd)/$(basename "$function")
    binary=$(basename "$function")
    function=consumer
    ;;
esac
[ -f "$event" ] || { echo "no event file $event" >&2; exit 2; }
state="$root/.emulators"
# Wherever CARGO_TARGET_DIR or a cargo config puts the build.
target=$(cd "$root" && cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
mkdir -p "$state"
export PATH="$root/.venv-sam/bin:$PATH"

keep_hints() { # quarantine queue URL
  [ "${KEEP:-}" = 1 ] || return 0
  echo "== the emulators stay up (KEEP=1). Inspect with the operator's CLI, then stop them:" >&2
  echo "   . .emulators/env && $target/debug/sqs-backpressure stats --queue-url $1" >&2
  echo "   $target/debug/sqs-backpressure list --queue-url $1" >&2
  echo "   scripts/emulators.sh stop" >&2
}

pids=()
cleanup() {
  for pid in "${pids[@]}"; do pkill -TERM -P "$pid" 2>/dev/null || true; kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.5
  for pid in "${pids[@]}"; do pkill -KILL -P "$pid" 2>/dev/null || true; kill -KILL "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

if [ -n "${ENV_FILE:-}" ] && [ ! -f "$ENV_FILE" ]; then
  echo "ENV_FILE=$ENV_FILE is not a file: give NAME=VALUE lines (your processor's variables, ENVELOPE=sns, …)" >&2
  exit 2
fi

# Your NAME=VALUE lines after the consumer's: the later line of a name is the one in force.
add_env_file() { # env file
  [ -n "${ENV_FILE:-}" ] || return 0
  { echo; cat "$ENV_FILE"; } >>"$1"
  echo "== with your variables from $ENV_FILE" >&2
}

if [ -n "$yours" ]; then
  rm -f "$state/$function.env"
  "$target/debug/local-env" "$function" "$state/$function.env" &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$state/$function.env" ] && break; sleep 0.1; done
  [ -s "$state/$function.env" ] || { echo "the local environment was not prepared" >&2; exit 1; }
  add_env_file "$state/$function.env"
  echo "== lambda-invoke $yours $event (the variables in ${state#"$root"/}/$function.env)" >&2
  "$target/debug/lambda-invoke" "$yours" "$event" --env-file "$state/$function.env" \
    --log "$state/watch.log" >"$state/response.json" || {
    status=$?
    echo "== the invocation failed; the function's log:" >&2
    tail -n 40 "$state/watch.log" >&2
    exit "$status"
  }
  cat "$state/response.json"; echo
  echo "== each message's outcome" >&2
  quarantine=$(sed -n 's/^QUARANTINE_QUEUE_URL=//p' "$state/$function.env")
  "$target/debug/local-env" outcomes "$event" "$state/response.json" "$quarantine" "$state/watch.log"
  keep_hints "$quarantine"
  exit 0
fi

# cargo lambda watch builds the function on its own (cargo run -p PACKAGE --bin BINARY), and
# those dependency features differ from make demo's one combined build; built here first, in
# the open, so the first invocation's deadline is not spent compiling.
package=$([ "$function" = publisher ] && echo backlog-publisher || echo batch-consumer)
echo "== building $binary as cargo lambda watch runs it (cargo build -p $package --bin $binary);" \
  "the first time after make demo about 50 s on 2 cores, rebuilding the SDK crates whose features differ" >&2
(cd "$root" && cargo build -p "$package" --bin "$binary")

# A file left by an earlier run would be read before local-env rewrites it: gone first.
rm -f "$state/$function.env"
"$target/debug/local-env" "$function" "$state/$function.env" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$state/$function.env" ] && break; sleep 0.1; done
[ -s "$state/$function.env" ] || { echo "the local environment was not prepared" >&2; exit 1; }

port=$("$root/.venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The watch log lives outside the crates, or cargo-lambda would rebuild on every line it writes.
(cd "$root" && cargo lambda watch -A 127.0.0.1 -P "$port" --env-file "$state/$function.env" \
  --ignore-changes --wait --timeout 60 -p "$package" --bin "$binary" >"$state/watch.log" 2>&1) &
pids+=($!)
for _ in $(seq 1 300); do
  (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.2
done

echo "== cargo lambda invoke $binary --data-file $event" >&2
timeout 120 cargo lambda invoke -A 127.0.0.1 -P "$port" --data-file "$event" "$binary" \
  >"$state/response.json" || {
  status=$?
  echo "== the invocation failed; cargo lambda watch said:" >&2
  tail -n 40 "$state/watch.log" >&2
  exit "$status"
}
cat "$state/response.json"; echo
if [ "$function" = consumer ]; then
  echo "== each message's outcome" >&2
  quarantine=$(sed -n 's/^QUARANTINE_QUEUE_URL=//p' "$state/$function.env")
  "$target/debug/local-env" outcomes "$event" "$state/response.json" "$quarantine" "$state/watch.log"
  keep_hints "$quarantine"
fi
