#!/usr/bin/env bash
# Dependencies no code uses: cargo-machete reads every package's sources for each dependency's
# name. The pinned cargo-machete is installed into the cargo home on first use (under a minute,
# once a machine); it exits 1 when it finds one. A name in a doc example counts as a use.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=0.9.2
if [ "$(cargo machete --version 2>/dev/null)" != "$version" ]; then
  echo "unused-deps: installing cargo-machete $version (first run only; under a minute)" >&2
  # A debug build: the tool runs for seconds, and its optimised build took a minute of make test.
  cargo install --locked --quiet --debug "cargo-machete@$version"
fi
cd "$root"
cargo machete
