#!/usr/bin/env python3
"""The code's shape, measured: import loops between a crate's files, files of 400 lines or more,
the longest non-test functions and the non-test Rust lines per crate.

Usage: scripts/shape.py [--check]   (--check exits 1 when a loop, a long file or a function of
80 lines or more is found)

A loop is counted by following `crate::` and `super::` paths (in `use` lines and inline) from
one file to the file that defines the module they name. Test code is a file named `tests.rs` or
`*_tests.rs`, anything under a crate's tests/, benches/ or examples/, and a `#[cfg(test)]` item
from its attribute to its closing brace.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE_LIMIT = 400
FUNCTION_LIMIT = 80
SOURCE_DIRS = ["crates", "tests", "bench", "fuzz"]


def rust_files():
    for top in SOURCE_DIRS:
        for path in sorted((ROOT / top).rglob("*.rs")):
            if "target" not in path.parts:
                yield path


def is_test_file(path):
    parts = path.relative_to(ROOT).parts
    return (
        path.name == "tests.rs"
        or path.name.endswith("_tests.rs")
        or parts[0] == "tests"
        or any(p in ("tests", "benches", "examples") for p in parts[2:-1])
    )


def strip_strings(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def test_lines(lines):
    """Indexes of lines inside a `#[cfg(test)]` item."""
    inside = set()
    i = 0
    while i < len(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", lines[i]):
            depth, opened, j = 0, False, i
            while j < len(lines):
                code = strip_strings(lines[j])
                depth += code.count("{") - code.count("}")
                opened = opened or "{" in code
                inside.add(j)
                if (opened and depth == 0) or (not opened and code.rstrip().endswith(";")):
                    break
                j += 1
            i = j
        i += 1
    return inside


FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")


def functions(lines, skip):
    """(name, first line, length) of every function outside `skip`."""
    found = []
    for i, line in enumerate(lines):
        match = FN.match(line)
        if not match or i in skip:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            code = strip_strings(lines[j])
            if not opened and ";" in code and "{" not in code:
                break
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                found.append((match.group(6), i + 1, j - i + 1))
                break
    return found


def module_of(crate_src, path):
    rel = path.relative_to(crate_src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def crate_graph(crate_src):
    files = [p for p in crate_src.rglob("*.rs") if not is_test_file(p)]
    by_module = {}
    for path in files:
        module = module_of(crate_src, path)
        # main.rs and lib.rs both map to the root; bins in src/bin are their own crates
        if "bin" in path.relative_to(crate_src).parts:
            continue
        by_module.setdefault(module, path)
    edges = {}
    for module, path in by_module.items():
        lines = path.read_text().splitlines()
        skip = test_lines(lines)
        text = "\n".join(strip_strings(l) for i, l in enumerate(lines) if i not in skip)
        targets = set()
        for match in re.finditer(r"\b(crate|super)((?:::\w+)+)", text):
            names = match.group(2).strip(":").split("::")
            if match.group(1) == "crate":
                base = ()
            else:
                base = module[:-1]
            for length in range(len(names), 0, -1):
                candidate = base + tuple(names[:length])
                if candidate in by_module:
                    if candidate != module and not is_ancestor(candidate, module):
                        targets.add(candidate)
                    break
        edges[module] = targets
    return by_module, edges


def is_ancestor(candidate, module):
    return module[: len(candidate)] == candidate


def loops(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(component)

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def main():
    check = "--check" in sys.argv
    long_files, all_functions, per_crate = [], [], {}
    for path in rust_files():
        lines = path.read_text().splitlines()
        rel = path.relative_to(ROOT)
        if len(lines) >= FILE_LIMIT:
            long_files.append((len(lines), rel))
        if is_test_file(path):
            continue
        skip = test_lines(lines)
        crate = "/".join(rel.parts[:2])
        per_crate[crate] = per_crate.get(crate, 0) + len(lines) - len(skip)
        for name, line, length in functions(lines, skip):
            all_functions.append((length, f"{rel}:{line}", name))

    found_loops = []
    for src in sorted(ROOT.glob("crates/*/src")):
        _, edges = crate_graph(src)
        for component in loops(edges):
            found_loops.append((src.parent.name, sorted("::".join(m) or "crate" for m in component)))

    print(f"import loops: {len(found_loops)}")
    for crate, members in found_loops:
        print(f"  {crate}: {' <-> '.join(members)}")
    print(f"files of {FILE_LIMIT} lines or more: {len(long_files)}")
    for length, rel in sorted(long_files, reverse=True):
        print(f"  {length:5} {rel}")
    all_functions.sort(reverse=True)
    print("longest non-test functions:")
    for length, where, name in all_functions[:8]:
        print(f"  {length:5} {name} ({where})")
    print("non-test Rust lines per crate:")
    for crate, count in sorted(per_crate.items()):
        print(f"  {count:6} {crate}")
    print(f"  {sum(per_crate.values()):6} in all")

    too_long = [f for f in all_functions if f[0] >= FUNCTION_LIMIT]
    if check and (found_loops or long_files or too_long):
        sys.exit(1)


if __name__ == "__main__":
    main()
