#!/usr/bin/env bash
# The public surface of backpressure-batch against the one recorded in
# crates/batch/public-api.txt, so that growth is a visible diff in review.
#
#   scripts/public-api.sh           fail when the surface differs from the record
#   scripts/public-api.sh --bless   record the surface as it is
#   scripts/public-api.sh json      only rustdoc's JSON (make test builds it beside other steps)
#
# rustdoc's JSON output is still unstable: stable rustdoc writes it with
# RUSTC_BOOTSTRAP=1, which unlocks only that flag for this one command. The
# format version it writes is pinned by public-api's version in tests/Cargo.toml
# (0.52.1 reads format 57, rustc 1.95's); a toolchain that writes another
# fails here with the versions named, and the pin moves with the toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

crate=backpressure-batch
record=crates/batch/public-api.txt
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

# A target directory of its own: RUSTC_BOOTSTRAP is part of every unit's fingerprint, so in the
# workspace's directory this build and the next check would each rebuild the other's dependencies.
json_target="$target/public-api"
RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$json_target" cargo rustdoc -q -p "$crate" --all-features \
  -- -Z unstable-options --output-format json
[ "${1:-}" = "json" ] && exit 0
# The reader as make test builds the workspace: `-p e2e-tests` alone would resolve its features
# apart from the workspace's and rebuild the SDK crates for it.
cargo build -q --workspace --bins --examples
json="$json_target/doc/${crate//-/_}.json"
current="$json_target/$crate.txt"
"$target/debug/public-api" "$json" >"$current"

if [ "${1:-}" = "--bless" ]; then
  cp "$current" "$record"
  echo "recorded $(wc -l <"$record") public items of $crate in $record"
elif diff -u "$record" "$current"; then
  echo "the public surface of $crate is the recorded one: $(wc -l <"$record") items"
else
  echo "the public surface of $crate differs from $record (above: - recorded, + now)." >&2
  echo "If the change is meant, record it with scripts/public-api.sh --bless and commit the file." >&2
  exit 1
fi
