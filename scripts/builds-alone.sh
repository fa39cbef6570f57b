#!/usr/bin/env bash
# The gate's check that no package leans on features another package turns on: inside the
# workspace, cargo unifies features, so a package that forgot one still builds there and fails
# alone (sqs-worker once did, and with it the Dockerfile). cargo-hack checks every package a user
# builds on its own, and the libraries with each of their features alone, any warning failing the
# step; the Dockerfile's own cargo command builds sqs-worker alone. The pinned cargo-hack is
# installed into the cache on first use (scripts/cache.sh).
# Dev-dependencies stay in the manifests: under the workspace's resolver (3) they turn on no
# feature of a build without tests, so a check here resolves as a user's build does (cargo-hack's
# --no-dev-deps gave the same units for every one of these checks, and rewrote the manifests
# and the lock file while it ran).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/cache.sh
. "$root/scripts/cache.sh"
cd "$root"

# Not checked alone, each for its reason: the end-to-end harness, the benchmarks and the fuzz
# targets are only ever built inside this workspace (make test, make bench, make fuzz build them
# there), never by a user on their own; sqs-worker is built alone by the Dockerfile's command
# below, which is a check and a link of it.
not_alone=(--exclude e2e-tests --exclude sqs-backpressure-bench --exclude lambda-floor
  --exclude backpressure-fuzz --exclude sqs-worker)

# Every package alone, the libraries with each feature alone and their tests with none.
checks() {
  cache_tool hack
  local log
  log=$(mktemp)
  trap 'rm -f "$log"' RETURN
  cargo hack check --locked --workspace "${not_alone[@]}" 2>&1 | tee "$log"
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
# less .dockerignore's entries, as `COPY . .` sees it), in a target dir of its own. It fails
# wherever `docker build` would: a package or flag it names that does not exist, a lock file out
# of date (--locked), a file the context leaves out, a feature sqs-worker forgot, a link error.
# Only the release profile's optimisation is turned down (no LTO, opt-level 0, many codegen
# units): the fat-LTO build took 443 to 631 s of the gate to prove again what this build proves,
# and a failure of fat LTO alone would show first in `make worker-image`.
dockerfile() {
  local build target context pattern log
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
  # tar keeps each file's time, so cargo rebuilds only what changed since the last run.
  tar -C "$root" "${excludes[@]}" -cf - . | tar -C "$context" -xf -
  echo "builds-alone: the Dockerfile's build: $build (in $context, $(du -sh "$context" | cut -f1) of context; release profile without LTO)"
  log=$(mktemp)
  trap 'rm -f "$log"' RETURN
  if ! (cd "$context" && CARGO_TARGET_DIR="$target/dockerfile/target" CARGO_PROFILE_RELEASE_LTO=off \
    CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 \
    CARGO_PROFILE_RELEASE_STRIP=none $build) 2>&1 | tee "$log"; then
    echo "builds-alone: the Dockerfile's command fails (above): so would docker build" >&2
    return 1
  fi
  if grep -q '^warning' "$log"; then
    echo "builds-alone: sqs-worker warns when built alone by the Dockerfile's command (above)" >&2
    return 1
  fi
}

case "${1:-}" in
  checks) checks ;;
  dockerfile) dockerfile ;;
  "") checks && dockerfile ;;
  *) echo "usage: $0 [checks | dockerfile]" >&2; exit 2 ;;
esac
