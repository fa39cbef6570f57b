#!/usr/bin/env bash
# The supply chain, offline: `cargo deny check licenses bans sources` against deny.toml (the
# licenses we accept, one version of each SDK crate, crates.io as the only source). The pinned
# cargo-deny is installed into the cargo home on first use (a few minutes, once a machine).
# Advisories need the RustSec database, which CI cannot fetch: docs/testing.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=0.20.2
if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $version" ]; then
  echo "supply-chain: installing cargo-deny $version (first run only; a few minutes)" >&2
  cargo install --locked --quiet "cargo-deny@$version"
fi
cd "$root"
# Every platform's crates, so the check reads what it lists without the network.
cargo fetch --locked --quiet
cargo deny --offline check licenses bans sources
