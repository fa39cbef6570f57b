#!/usr/bin/env bash
# The gate's packaging check: `cargo package` of core, startup, the library and the app crate, each verified by a build
# from its own tarball. The verification builds the library against core taken from a local
# registry, in the same target dir, under the same name and version every time; cargo holds a
# registry crate immutable, so a copy it compiled in an earlier run would stand in for the core
# just changed (seen: a second run after a change to core failed against the first run's core).
# Those copies, and only those, are removed first.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Wherever CARGO_TARGET_DIR or a cargo config puts the build.
target=$(cd "$root" && cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
cargo_home=${CARGO_HOME:-$HOME/.cargo}

rm -rf "$target/package" "$cargo_home"/registry/src/-*/backpressure-core-* \
  "$cargo_home"/registry/src/-*/backpressure-startup-* "$cargo_home"/registry/src/-*/backpressure-batch-*
for dep_info in "$target"/debug/deps/backpressure_{core,startup,batch}-*.d; do
  [ -f "$dep_info" ] || continue
  # Built from the local registry's extraction, not from the workspace.
  grep -q -a "/registry/src/-[^/]*/backpressure-" "$dep_info" || continue
  unit=$(basename "$dep_info" .d)
  rm -rf "$target/debug/deps/$unit".* "$target/debug/deps/lib$unit".* \
    "$target/debug/.fingerprint/${unit//_/-}"
done
cd "$root"
# The verification builds each tarball as a workspace of its own, which our [profile] tables do
# not reach: full debug info by default. Without it the step needs 0.9 GB of target/, not 1.6 GB
# (measured from an empty target dir), where a CI disk once ran out.
export CARGO_PROFILE_DEV_DEBUG=false
exec cargo package --quiet --allow-dirty -p backpressure-core -p backpressure-startup -p backpressure-batch -p backpressure-app
