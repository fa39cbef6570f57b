#!/usr/bin/env bash
# make test's check that no package leans on features another package turns on: inside the
# workspace, cargo unifies features, so a package that forgot one still builds there and fails
# alone (sqs-worker once did, and with it the Dockerfile). cargo-hack checks every package on its
# own and the library with each of its features alone, any warning failing the step; then the
# Dockerfile's own cargo command runs, as the Dockerfile writes it, on a copy of what `docker
# build` sends it. The pinned cargo-hack is installed into the cargo home on first use.
# Dev-dependencies stay in the manifests: under the workspace's resolver (3) they turn on no
# feature of a build without tests, so a check here resolves as a user's build does (cargo-hack's
# --no-dev-deps gave the same units for every one of these checks, and rewrote the manifests
# and the lock file while it ran).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=0.6.46
if [ "$(cargo hack --version 2>/dev/null)" != "cargo-hack $version" ]; then
  echo "builds-alone: installing cargo-hack $version (first run only; under a minute)" >&2
  # A debug build: the tool runs for seconds, and its optimised build took a minute of make test.
  cargo install --locked --quiet --debug "cargo-hack@$version"
fi
cd "$root"

# Every package alone, the libraries with each feature alone and their tests with none.
checks() {
  local log
  log=$(mktemp)
  trap 'rm -f "$log"' RETURN
  cargo hack check --locked --workspace 2>&1 | tee "$log"
  cargo hack check --locked --package backpressure-batch --package backpressure-app --each-feature 2>&1 | tee -a "$log"
  # The libraries' own tests with only their default features: `cargo test -p backpressure-batch`
  # from a checkout must compile without the features the workspace's other members turn on.
  cargo hack check --locked --package backpressure-batch --package backpressure-app --tests 2>&1 | tee -a "$log"
  if grep -q '^warning' "$log"; then
    echo "builds-alone: a package warns when built on its own or with one feature (above)" >&2
    return 1
  fi
}

# The Dockerfile's cargo command as it writes it, in a copy of the build context (the checkout
# less .dockerignore's entries, as `COPY . .` sees it). Its release build shares nothing with the
# dev profile's, so it gets a target dir of its own, and make test runs it beside the dev builds.
dockerfile() {
  local build target context pattern
  local excludes=()
  build=$(sed -n 's/^RUN \(cargo build .*\)$/\1/p' Dockerfile)
  if [ -z "$build" ]; then
    echo "builds-alone: no 'RUN cargo build …' line in the Dockerfile" >&2
    return 1
  fi
  target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  context="$target/dockerfile/context"
  while read -r pattern; do
    case "$pattern" in "" | "#"*) ;; *) excludes+=(--exclude="./$pattern") ;; esac
  done <.dockerignore
  rm -rf "$context"
  mkdir -p "$context"
  tar -C "$root" "${excludes[@]}" -cf - . | tar -C "$context" -xf -
  echo "builds-alone: the Dockerfile's build: $build (in $context, $(du -sh "$context" | cut -f1) of context)"
  (cd "$context" && CARGO_TARGET_DIR="$target/dockerfile/target" $build)
}

case "${1:-}" in
  checks) checks ;;
  dockerfile) dockerfile ;;
  "") checks && dockerfile ;;
  *) echo "usage: $0 [checks | dockerfile]" >&2; exit 2 ;;
esac
