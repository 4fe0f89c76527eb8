#!/usr/bin/env python3
"""Fails when files of the core import each other in a circle.

Every `.rs` file under core/src is a module (`strategy/hashed/jump.rs` is
`strategy::hashed::jump`, a `mod.rs` is its folder). A module depends on the modules its
code names through `crate::...` paths, `use crate::{...}` groups and `super::` paths
(comments, doc links included, build nothing and are left out). The dependency arrows
must point one way: `ops` knows strategies, strategies know nothing of `ops`, `router`
or `topology`, and no two files lean on each other. Prints the layers and exits 1 with
the files of any cycle.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "core" / "src"


def module_of(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return "::".join(parts)


MODULES = {module_of(path): path for path in ROOT.rglob("*.rs")}


def code(path: pathlib.Path) -> str:
    return "\n".join(line.split("//", 1)[0] for line in path.read_text().splitlines())


def longest_module(path: str) -> str | None:
    segments = path.split("::")
    for end in range(len(segments), 0, -1):
        candidate = "::".join(segments[:end])
        if candidate in MODULES:
            return candidate
    return None


def dependencies(module: str, path: pathlib.Path) -> set[str]:
    text = code(path)
    found = set()
    for named in re.findall(r"\bcrate::((?:[a-z_0-9]+::)*[A-Za-z_0-9]+)", text):
        found.add(longest_module(named))
    for base, group in re.findall(r"\buse crate::((?:[a-z_0-9]+::)*)\{([^}]*)\}", text):
        for name in re.findall(r"([a-z_0-9]+)", group):
            found.add(longest_module(base + name))
    parent = module.rsplit("::", 1)[0] if "::" in module else ""
    if path.name == "mod.rs":
        parent = module
    for named in re.findall(r"\bsuper::([a-z_0-9]+)", text):
        # `super::` in a file module is its folder; inside `mod tests` it is the file itself.
        candidate = f"{parent}::{named}" if parent else named
        found.add(longest_module(candidate))
    found.discard(None)
    found.discard("")
    found.discard(module)
    return found


graph = {module: dependencies(module, path) for module, path in MODULES.items() if module}

# Tarjan's strongly connected components: any component of two or more files is a cycle.
index: dict[str, int] = {}
low: dict[str, int] = {}
stack: list[str] = []
on_stack: set[str] = set()
cycles: list[list[str]] = []
sys.setrecursionlimit(10_000)


def connect(node: str) -> None:
    index[node] = low[node] = len(index)
    stack.append(node)
    on_stack.add(node)
    for target in sorted(graph[node]):
        if target not in graph:
            continue
        if target not in index:
            connect(target)
            low[node] = min(low[node], low[target])
        elif target in on_stack:
            low[node] = min(low[node], index[target])
    if low[node] == index[node]:
        component = []
        while True:
            member = stack.pop()
            on_stack.discard(member)
            component.append(member)
            if member == node:
                break
        if len(component) > 1:
            cycles.append(sorted(component))


for module in sorted(graph):
    if module not in index:
        connect(module)

top = sorted({module.split("::")[0] for module in graph})
for name in top:
    targets = {t.split("::")[0] for m, ts in graph.items() if m.split("::")[0] == name for t in ts} - {name}
    print(f"{name:16} -> {', '.join(sorted(targets)) or '-'}")
if cycles:
    for cycle in cycles:
        print(f"import cycle of {len(cycle)} files: {', '.join(cycle)}", file=sys.stderr)
    sys.exit(1)
print(f"no import cycle among the core's {len(graph)} files")
