#!/usr/bin/env bash
# SAM tooling at .venv-sam/, a link into the cache (scripts/cache.sh), kept apart from the
# emulators' .venv/: aws-sam-cli pins other boto3.
#   scripts/sam.sh install      pinned aws-sam-cli and cfn-lint
#   scripts/sam.sh lint         cfn-lint on template.yaml and each parameter set, `sam validate --lint`
#   scripts/sam.sh CMD ARGS...  run sam, with the pinned cargo-lambda on the PATH
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv-sam"
requirements="$root/scripts/requirements-sam.txt"
constraints="$root/scripts/constraints-sam.txt"
export SAM_CLI_TELEMETRY=0

# shellcheck source=scripts/cache.sh
. "$root/scripts/cache.sh"

make_sam() { # dir
  echo "sam: installing pinned aws-sam-cli and cfn-lint into $1 (once a cache)" >&2
  "${PYTHON:-python3}" -m venv "$1"
  "$1/bin/pip" install --quiet -r "$requirements" -c "$constraints"
}

install() {
  cache_env "$venv" sam make_sam "$("${PYTHON:-python3}" -VV)" "$requirements" "$constraints"
}

case "${1:-}" in
  install) install ;;
  lint)
    install
    cd "$root"
    # The template as written, and once per parameter set (tests/template-sets/) with that set's
    # values as defaults: lambda, ecs with or without the service, and the rest.
    sets=$("$venv/bin/python" scripts/render_template.py)
    mapfile -t rendered <<<"$sets"
    # `sam validate --lint` is cfn-lint's own lint (its API, default rules, the --region given)
    # after SAM CLI reads the file: one cfn-lint over every rendering applies the same rules in one
    # process, and SAM CLI reads and lints the template as written, as its users run it.
    "$venv/bin/cfn-lint" --regions us-east-1 -- template.yaml "${rendered[@]}"
    echo "cfn-lint: template.yaml and its ${#rendered[@]} parameter sets clean"
    "$venv/bin/sam" validate --lint --template template.yaml --region us-east-1
    ;;
  "") echo "usage: $0 install | lint | SAM-ARGS..." >&2; exit 2 ;;
  *)
    install
    cd "$root"
    PATH="$venv/bin:$PATH" "$venv/bin/sam" "$@"
    ;;
esac
