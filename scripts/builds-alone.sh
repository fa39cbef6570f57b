#!/usr/bin/env bash
# make test's check that no package leans on features another package turns on: inside the
# workspace, cargo unifies features, so a package that forgot one still builds there and fails
# alone (sqs-worker once did, and with it the Dockerfile). cargo-hack checks every package on its
# own and the library with each of its features alone (dev-dependencies left out, as a user's
# build has them), any warning failing the step; then the Dockerfile's own cargo command runs, as
# the Dockerfile writes it. The pinned cargo-hack is installed into the cargo home on first use.
# No --locked for cargo-hack: without dev-dependencies the lock file would lose entries, which
# --locked refuses; cargo-hack puts Cargo.toml and Cargo.lock back as they were.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=0.6.46
if [ "$(cargo hack --version 2>/dev/null)" != "cargo-hack $version" ]; then
  echo "builds-alone: installing cargo-hack $version (first run only; under a minute)" >&2
  # A debug build: the tool runs for seconds, and its optimised build took a minute of make test.
  cargo install --locked --quiet --debug "cargo-hack@$version"
fi
cd "$root"

# --no-dev-deps rewrites the manifests and the lock file while the checks run: the Dockerfile's
# build (`--locked`), which make test runs beside other steps, must not read them then.
hold_manifests() {
  mkdir -p "$root/.emulators"
  exec 7>"$root/.emulators/manifests.lock"
  flock 7
}

# Every package alone, the libraries with each feature alone and their tests with none.
checks() {
  local log
  log=$(mktemp)
  trap 'rm -f "$log"' RETURN
  hold_manifests
  cargo hack check --workspace --no-dev-deps 2>&1 | tee "$log"
  cargo hack check --package backpressure-batch --package backpressure-app --each-feature --no-dev-deps 2>&1 | tee -a "$log"
  # The libraries' own tests with only their default features: `cargo test -p backpressure-batch`
  # from a checkout must compile without the features the workspace's other members turn on.
  cargo hack check --package backpressure-batch --package backpressure-app --tests 2>&1 | tee -a "$log"
  if grep -q '^warning' "$log"; then
    echo "builds-alone: a package warns when built on its own or with one feature (above)" >&2
    return 1
  fi
}

# The Dockerfile's cargo command as it writes it. Its release build shares nothing with the dev
# profile's, so it gets a target dir of its own, and make test runs it beside the dev builds.
dockerfile() {
  local build target
  build=$(sed -n 's/^RUN \(cargo build .*\)$/\1/p' Dockerfile)
  if [ -z "$build" ]; then
    echo "builds-alone: no 'RUN cargo build …' line in the Dockerfile" >&2
    return 1
  fi
  hold_manifests
  target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  echo "builds-alone: the Dockerfile's build: $build (in $target/dockerfile)"
  CARGO_TARGET_DIR="$target/dockerfile" $build
}

case "${1:-}" in
  checks) checks ;;
  dockerfile) dockerfile ;;
  "") checks && dockerfile ;;
  *) echo "usage: $0 [checks | dockerfile]" >&2; exit 2 ;;
esac
