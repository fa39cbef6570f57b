#!/usr/bin/env bash
# Dependencies no code uses: cargo-machete reads every package's sources for each dependency's
# name, and exits 1 when it finds one. A name in a doc example counts as a use. The pinned
# cargo-machete is installed into the cache on first use (scripts/cache.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
exec scripts/tool.sh machete
