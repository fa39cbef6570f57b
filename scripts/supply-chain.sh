#!/usr/bin/env bash
# The supply chain, offline: `cargo deny check licenses bans sources` against deny.toml (the
# licenses we accept, one version of each SDK crate, crates.io as the only source). The pinned
# cargo-deny is installed into the cargo home on first use (under two minutes, once a machine).
# Advisories need the RustSec database, which CI cannot fetch: docs/testing.md.
#   scripts/supply-chain.sh           install cargo-deny if needed, then check
#   scripts/supply-chain.sh install   only the install (make test runs it beside the builds)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=0.20.2
# One install at a time: make test installs it beside the builds, and a check that reaches this
# point first waits for that install rather than start a second one.
mkdir -p "$root/.emulators"
exec 8>"$root/.emulators/cargo-deny.lock"
flock 8
if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $version" ]; then
  echo "supply-chain: installing cargo-deny $version (first run only; under two minutes)" >&2
  # A debug build: 85 s to install on an idle 2-core machine against 200 s optimised, and the
  # check it runs then takes 3 s instead of 1.
  cargo install --locked --quiet --debug "cargo-deny@$version"
fi
exec 8>&-
[ "${1:-}" = "install" ] && exit 0
cd "$root"
# Every platform's crates, so the check reads what it lists without the network.
cargo fetch --locked --quiet
cargo deny --offline check licenses bans sources
