#!/usr/bin/env bash
# The supply chain, offline: `cargo deny check licenses bans sources` against deny.toml (the
# licenses we accept, one version of each SDK crate, crates.io as the only source). The pinned
# cargo-deny is installed into the cache on first use (scripts/cache.sh; 85 s, once a cache).
# Advisories need the RustSec database, which CI cannot fetch: docs/testing.md.
#   scripts/supply-chain.sh           install cargo-deny if needed, then check
#   scripts/supply-chain.sh install   only the install (the gate runs it beside the builds)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/cache.sh
. "$root/scripts/cache.sh"
cache_tool deny
[ "${1:-}" = "install" ] && exit 0
cd "$root"
# Every platform's crates, so the check reads what it lists without the network.
cargo fetch --locked --quiet
cargo deny --offline check licenses bans sources
