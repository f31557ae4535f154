#!/usr/bin/env python3
"""Import loops between the top-level modules of each sergeant crate.

A module that uses `crate::other` (or, at the crate root, `super::other`) depends on it; a loop
is a set of modules that all reach each other. Test code (`#[cfg(test)]` onwards in a file, and
files named `tests.rs` or `*_tests.rs`) and comments are not counted. Loops named in KNOWN are reported but do not fail the check (each
with why it is still there); any other loop fails it.

Usage: module_loops.py REPO CRATE_DIR...
"""

import os
import re
import sys

# Loops not yet taken apart, each with its reason: (crate, frozenset of modules) -> why it is
# still there; remove an entry when its loop is gone. None remain.
KNOWN = {}


def code_of(path):
    text = open(path, encoding="utf-8").read().split("#[cfg(test)]")[0]
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))


def module_files(src, module):
    base = os.path.join(src, module)
    files = [base + ".rs"] if os.path.exists(base + ".rs") else []
    for folder, _, names in os.walk(base):
        files += [os.path.join(folder, n) for n in names if n.endswith(".rs")]
    # Files of tests only (`tests.rs`, `*_tests.rs`, declared under `#[cfg(test)]`) do not count.
    files = [f for f in files if not os.path.basename(f).endswith("tests.rs")]
    return files


def dependencies(src):
    modules = sorted(
        n[:-3] if n.endswith(".rs") else n
        for n in os.listdir(src)
        if n not in ("lib.rs", "main.rs")
        and (n.endswith(".rs") or os.path.isdir(os.path.join(src, n)))
    )
    edges = {m: set() for m in modules}
    for module in modules:
        for path in module_files(src, module):
            code = code_of(path)
            names = re.findall(r"\bcrate::([a-z_0-9]+)", code)
            if os.path.dirname(path) == src:
                names += re.findall(r"\bsuper::([a-z_0-9]+)", code)
            edges[module] |= {n for n in names if n in edges and n != module}
    return edges


def loops(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in edges:
        if v not in index:
            visit(v)
    return found


def main():
    repo, crates = sys.argv[1], sys.argv[2:]
    failed = False
    for crate in crates:
        edges = dependencies(os.path.join(repo, crate, "src"))
        for component in loops(edges):
            names = " <-> ".join(sorted(component))
            reason = KNOWN.get((crate, component))
            if reason:
                print(f"module loops: {crate}: {names} (known: {reason})")
            else:
                print(f"module loops: {crate}: {names} import each other", file=sys.stderr)
                for m in sorted(component):
                    print(f"  {m} -> {', '.join(sorted(edges[m] & component))}", file=sys.stderr)
                failed = True
    if not failed:
        beyond = " beyond the known ones" if KNOWN else ""
        print(f"module loops: none in {len(crates)} crates{beyond}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
