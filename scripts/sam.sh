#!/usr/bin/env bash
# SAM tooling in .venv-sam/ (kept apart from the emulators' .venv/: aws-sam-cli pins other boto3).
#   scripts/sam.sh install      pinned aws-sam-cli and cfn-lint
#   scripts/sam.sh lint         cfn-lint and `sam validate --lint` on template.yaml and each parameter set
#   scripts/sam.sh CMD ARGS...  run sam, with the pinned cargo-lambda on the PATH
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv-sam"
requirements="$root/scripts/requirements-sam.txt"
constraints="$root/scripts/constraints-sam.txt"
export SAM_CLI_TELEMETRY=0

install() {
  [ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
  local stamp="$venv/.installed"
  if ! cat "$requirements" "$constraints" | cmp -s - "$stamp"; then
    echo "sam: installing pinned aws-sam-cli and cfn-lint into .venv-sam (first run only)" >&2
    "$venv/bin/pip" install --quiet -r "$requirements" -c "$constraints"
    cat "$requirements" "$constraints" >"$stamp"
  fi
}

case "${1:-}" in
  install) install ;;
  lint)
    install
    cd "$root"
    # The template as written, then once per parameter set (tests/template-sets/)
    # with that set's values as defaults: lambda, and ecs with or without the service.
    sets=$("$venv/bin/python" scripts/render_template.py)
    mapfile -t rendered <<<"$sets"
    for template in template.yaml "${rendered[@]}"; do
      "$venv/bin/cfn-lint" "$template"
      echo "cfn-lint: ${template#"$root"/} clean"
      "$venv/bin/sam" validate --lint --template "$template" --region us-east-1
    done
    ;;
  "") echo "usage: $0 install | lint | SAM-ARGS..." >&2; exit 2 ;;
  *)
    install
    cd "$root"
    PATH="$venv/bin:$PATH" "$venv/bin/sam" "$@"
    ;;
esac
