"""Writes template.yaml once per parameter set in tests/template-sets/, with that
set's values as the parameters' defaults, so cfn-lint and `sam validate --lint`
check each deployment's own values (neither applies a parameter set to a SAM
template). Output: target/template-sets/<set>.json, one path per line on stdout.

Run with the .venv-sam interpreter: cfn-lint's loader reads the short-form tags.
"""

import json
import sys
from pathlib import Path

from cfnlint.decode import cfn_yaml


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    template = cfn_yaml.load(str(root / "template.yaml"))
    out = root / "target" / "template-sets"
    out.mkdir(parents=True, exist_ok=True)
    sets = sorted((root / "tests" / "template-sets").glob("*.json"))
    if not sets:
        print("render_template: no parameter sets in tests/template-sets", file=sys.stderr)
        return 1
    for path in sets:
        values = json.loads(path.read_text())
        unknown = sorted(set(values) - set(template["Parameters"]))
        if unknown:
            print(f"render_template: {path.name}: unknown parameters {unknown}", file=sys.stderr)
            return 1
        rendered = json.loads(json.dumps(template))
        for name, value in values.items():
            rendered["Parameters"][name]["Default"] = value
        target = out / f"{path.stem}.json"
        target.write_text(json.dumps(rendered, indent=1))
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
