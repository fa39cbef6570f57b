#!/usr/bin/env bash
# The public surfaces of the libraries against the ones recorded beside them
# (crates/batch/public-api.txt, crates/app/public-api.txt), so that growth is a
# visible diff in review.
#
#   scripts/public-api.sh           fail when a surface differs from its record
#   scripts/public-api.sh --bless   record the surfaces as they are
#   scripts/public-api.sh json      only rustdoc's JSON (the gate builds it beside other steps)
#
# rustdoc's JSON output is still unstable: stable rustdoc writes it with
# RUSTC_BOOTSTRAP=1, which unlocks only that flag for this one command. The
# format version it writes is pinned by public-api's version in tests/Cargo.toml
# (0.52.1 reads format 57, rustc 1.95's); a toolchain that writes another
# fails here with the versions named, and the pin moves with the toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each library and the directory its record is kept in.
libraries=("backpressure-batch crates/batch" "backpressure-app crates/app")
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

# A target directory of its own: RUSTC_BOOTSTRAP is part of every unit's fingerprint, so in the
# workspace's directory this build and the next check would each rebuild the other's dependencies.
json_target="$target/public-api"
for library in "${libraries[@]}"; do
  read -r crate _ <<<"$library"
  RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$json_target" cargo rustdoc -q -p "$crate" --all-features \
    -- -Z unstable-options --output-format json
done
[ "${1:-}" = "json" ] && exit 0
# The reader as make test builds the workspace: `-p e2e-tests` alone would resolve its features
# apart from the workspace's and rebuild the SDK crates for it.
cargo build -q --workspace --bins --examples
status=0
for library in "${libraries[@]}"; do
  read -r crate dir <<<"$library"
  record="$dir/public-api.txt"
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
    status=1
  fi
done
exit $status
