"""Which function artefacts a parameter set deploys: the template's conditions evaluated with
the set's values (and the parameters' defaults), as CloudFormation evaluates them, for each
function whose build metadata names its binary. deploy_stack.py asks only for those."""


def value_of(template, values, name):
    if name in values:
        return str(values[name])
    declared = template.get("Parameters", {}).get(name)
    if declared is None:
        raise SystemExit(f"deploy_stack: the template's conditions read {name}, which it does not declare")
    return str(declared.get("Default", ""))


def evaluate(template, values, node, seen=()):
    """A condition's value: the functions the template's Conditions use (Equals, Not, And, Or,
    Condition, Ref, Join)."""
    if not isinstance(node, dict):
        return node if not isinstance(node, list) else [evaluate(template, values, n, seen) for n in node]
    (function, args), = node.items()
    if function == "Ref":
        return value_of(template, values, args)
    if function == "Condition":
        return condition(template, values, args, seen)
    if function == "Fn::Equals":
        left, right = (evaluate(template, values, a, seen) for a in args)
        return str(left) == str(right)
    if function == "Fn::Not":
        return not evaluate(template, values, args[0], seen)
    if function == "Fn::And":
        return all(evaluate(template, values, a, seen) for a in args)
    if function == "Fn::Or":
        return any(evaluate(template, values, a, seen) for a in args)
    if function == "Fn::Join":
        items = evaluate(template, values, args[1], seen)
        items = items.split(",") if isinstance(items, str) else items
        return args[0].join(str(i) for i in items)
    raise SystemExit(f"deploy_stack: a condition uses {function}, which this script does not evaluate")


def condition(template, values, name, seen=()):
    if name in seen:
        raise SystemExit(f"deploy_stack: the template's conditions refer to each other: {' → '.join(seen + (name,))}")
    return bool(evaluate(template, values, template["Conditions"][name], seen + (name,)))


def deployed_binaries(template, values):
    """{binary: [logical ids]} of the functions the set creates, and the same of those it does not."""
    created, skipped = {}, {}
    for logical, resource in template.get("Resources", {}).items():
        binary = (resource.get("Metadata") or {}).get("BuildProperties", {}).get("Binary")
        if not binary:
            continue
        wanted = resource.get("Condition")
        made = wanted is None or condition(template, values, wanted)
        (created if made else skipped).setdefault(binary, []).append(logical)
    return created, skipped
