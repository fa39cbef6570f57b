#!/usr/bin/env bash
# SAM tooling in .venv-sam/ (kept apart from the emulators' .venv/: aws-sam-cli pins other boto3).
#   scripts/sam.sh install      pinned aws-sam-cli and cfn-lint
#   scripts/sam.sh lint         cfn-lint and `sam validate --lint` on template.yaml
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
    "$venv/bin/cfn-lint" template.yaml
    echo "cfn-lint: template.yaml clean"
    "$venv/bin/sam" validate --lint --template template.yaml --region us-east-1
    ;;
  "") echo "usage: $0 install | lint | SAM-ARGS..." >&2; exit 2 ;;
  *)
    install
    cd "$root"
    PATH="$venv/bin:$PATH" "$venv/bin/sam" "$@"
    ;;
esac
