#!/usr/bin/env bash
# A pinned cargo tool (scripts/cache.sh's pins), installed into the cache on first use, then run:
#   scripts/tool.sh nextest run --workspace
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/cache.sh
. "$root/scripts/cache.sh"
tool=${1:?usage: $0 hack|deny|machete|nextest ARGS...}
shift
cache_tool "$tool"
exec cargo "$tool" "$@"
