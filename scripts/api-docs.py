#!/usr/bin/env python3
"""The Python API reference, for `make docs`: one HTML page per public module of the
`shardroute` package, from the sources a user's type checker reads.

Each module's names are its `__all__`; their signatures are read (with `ast`) from the
committed stubs, `bindings-py/python/shardroute/__init__.pyi`, or from the module's own
`.py` where there is no stub; their docstrings from the source, or, for the compiled
module's classes and functions (whose docstrings are written once, on the Rust side), from
the installed package. A name in backquotes that the page documents becomes a link to it.

Usage: api-docs.py OUT_DIR, the pages written to OUT_DIR/python (run with the project's venv: the docstrings of the compiled
module are read from the installed package).
"""

from __future__ import annotations

import ast
import html
import importlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bindings-py" / "python" / "shardroute"
#: (module, source): the stub of the compiled module, the other modules' own sources.
MODULES = [
    ("shardroute", PACKAGE / "__init__.pyi"),
    ("shardroute.redis", PACKAGE / "redis.py"),
    ("shardroute.etcd", PACKAGE / "etcd.py"),
    ("shardroute.zookeeper", PACKAGE / "zookeeper.py"),
    ("shardroute.http", PACKAGE / "http.py"),
    ("shardroute.documents", PACKAGE / "documents.py"),
]
STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45}
code,pre{font-family:ui-monospace,monospace;font-size:.92em}pre.sig{background:#f4f4f4;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
.doc{margin:0 0 1.2rem 1.2rem}h3{margin-bottom:.2rem}nav li{display:inline;margin-right:.6rem}"""


@dataclass
class Entry:
    anchor: str  # "Router" or "Router.route"
    kind: str  # class, def, property, attribute, alias
    signature: str
    doc: str
    members: list[Entry] = field(default_factory=list)


def comment_above(lines: list[str], lineno: int) -> str:
    """The `#:` comment lines just above a line (1-based), as text."""
    found: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].strip().startswith("#:"):
        found.insert(0, lines[index].strip()[2:].strip())
        index -= 1
    return " ".join(found)


def arguments(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> str:
    text = ast.unparse(node.args)
    if method:
        text = re.sub(r"^(self|cls)(, )?", "", text)
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
    return f"{prefix}{node.name}({text}){returns}"


def runtime_doc(module: Any, *path: str) -> str:
    """A docstring of the installed package, defined on the object itself (not inherited)."""
    obj: Any = module
    for index, name in enumerate(path):
        holder = obj
        obj = holder.__dict__.get(name) if isinstance(holder, type) and index else getattr(holder, name, None)
        if obj is None:
            return ""
    doc = getattr(obj, "__doc__", None)
    if isinstance(obj, type) and "__doc__" not in obj.__dict__:
        return ""
    return doc if isinstance(doc, str) else ""


def clean(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc) if doc else ""


def entries(name: str, source: Path) -> tuple[str, list[Entry]]:
    text = source.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text)
    try:
        module: Any = importlib.import_module(name)
    except ImportError:
        module = None
    exported: list[str] | None = None
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                try:
                    exported = list(ast.literal_eval(node.value))
                except ValueError:  # __init__.py computes it: the module knows
                    exported = list(getattr(module, "__all__", []))
    if exported is None:
        exported = list(getattr(module, "__all__", []))
    found: list[Entry] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in exported:
            bases = ", ".join(ast.unparse(base) for base in node.bases)
            doc = clean(ast.get_docstring(node) or runtime_doc(module, node.name) if module else ast.get_docstring(node) or "")
            entry = Entry(node.name, "class", f"class {node.name}" + (f"({bases})" if bases else ""), doc)
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if member.name.startswith("_") and member.name not in ("__new__", "__init__"):
                        continue
                    decorators = {ast.unparse(d) for d in member.decorator_list}
                    mdoc = ast.get_docstring(member) or (runtime_doc(module, node.name, member.name) if module else "")
                    if member.name in ("__new__", "__init__") and not ast.get_docstring(member):
                        mdoc = ""  # the class docstring says how to make one
                    anchor = f"{node.name}.{member.name}"
                    if any(d.endswith("setter") for d in decorators):
                        continue
                    earlier = [e for e in entry.members if e.anchor == anchor]
                    if earlier:  # an @overload: one more signature, one docstring
                        earlier[0].signature += "\n" + arguments(member, method="staticmethod" not in decorators)
                        continue
                    if "property" in decorators:
                        returns = f": {ast.unparse(member.returns)}" if member.returns is not None else ""
                        entry.members.append(Entry(anchor, "property", f"{member.name}{returns}", clean(mdoc)))
                    else:
                        shown = arguments(member, method="staticmethod" not in decorators)
                        if member.name in ("__new__", "__init__"):
                            shown = node.name + shown[len(member.name):].split(" -> ")[0]
                        elif "classmethod" in decorators or "staticmethod" in decorators:
                            shown = f"{node.name}.{shown}"
                        entry.members.append(Entry(anchor, "def", shown, clean(mdoc)))
                elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name) and not member.target.id.startswith("_"):
                    value = f" = {ast.unparse(member.value)}" if member.value is not None else ""
                    entry.members.append(Entry(f"{node.name}.{member.target.id}", "attribute",
                                               f"{member.target.id}: {ast.unparse(member.annotation)}{value}",
                                               comment_above(lines, member.lineno)))
            found.append(entry)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in exported:
            doc = ast.get_docstring(node) or (runtime_doc(module, node.name) if module else "")
            found.append(Entry(node.name, "def", arguments(node, method=False), clean(doc)))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in exported and target.id != "__all__":
                    if isinstance(node, ast.AnnAssign):
                        shown = f"{target.id}: {ast.unparse(node.annotation)}"
                    else:
                        shown = f"{target.id} = {ast.unparse(node.value)}"
                    found.append(Entry(target.id, "alias", shown, comment_above(lines, node.lineno)))
    documented = {entry.anchor for entry in found}
    for node in tree.body:  # names the stub re-exports from another module
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                shown = alias.asname or alias.name
                if shown in exported and shown not in documented and node.module != name:
                    found.append(Entry(shown, "alias", f"from {node.module} import {alias.name}",
                                       f"Defined in `{node.module}`."))
                    documented.add(shown)
    for missing in exported:
        if missing not in documented and not missing.startswith("_") and module is not None:
            value = getattr(module, missing, None)
            if isinstance(value, type(sys)):
                found.append(Entry(missing, "module", f"module {value.__name__}", f"See `{value.__name__}`."))
    module_doc = ast.get_docstring(tree) or (getattr(module, "__doc__", "") or "")
    return clean(module_doc), found


#: Every module's anchors, filled before the pages are written: `shardroute.Router.route`
#: in a docstring links to that anchor of that page.
ANCHORS: dict[str, set[str]] = {}


def elsewhere(target: str, pages: dict[str, str], here: str) -> str | None:
    """The link of a dotted name documented on another page (`shardroute.Router`), or None."""
    for module in sorted(pages, key=len, reverse=True):
        if target == module:
            return pages[module] if pages[module] != here else None
        if target.startswith(module + ".") and target[len(module) + 1:] in ANCHORS.get(module, set()):
            return f"{pages[module] if pages[module] != here else ''}#{target[len(module) + 1:]}"
    return None


def render_text(text: str, anchors: set[str], pages: dict[str, str], here: str) -> str:
    """Paragraphs of a docstring; `name` and ``name`` as code, linked when documented."""

    def code(match: re.Match[str]) -> str:
        inner = match.group(2)
        shown = f"<code>{html.escape(inner)}</code>"
        target = inner.split("(")[0].rstrip(".")
        if target in anchors:
            return f'<a href="#{html.escape(target)}">{shown}</a>'
        link = elsewhere(target, pages, here)
        return f'<a href="{link}">{shown}</a>' if link else shown

    out = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        if not paragraph.strip():
            continue
        escaped = paragraph.replace("&", "\0amp").replace("<", "\0lt").replace(">", "\0gt")
        linked = re.sub(r"(``?)([^`\n]+?)\1", code, escaped)
        linked = linked.replace("\0amp", "&amp;").replace("\0lt", "&lt;").replace("\0gt", "&gt;")
        out.append(f"<p>{linked}</p>")
    return "\n".join(out)


def render_signature(signature: str, anchors: set[str]) -> str:
    parts = re.split(r"(\W+)", signature)
    return "".join(f'<a href="#{part}">{part}</a>' if part in anchors and index > 0 else html.escape(part)
                   for index, part in enumerate(parts))


def page(name: str, doc: str, found: list[Entry], pages: dict[str, str]) -> str:
    anchors = {entry.anchor for entry in found} | {member.anchor for entry in found for member in entry.members}
    here = pages[name]
    nav = " ".join(f'<li><a href="{pages[other]}">{other}</a></li>' for other in pages)
    body = [f"<h1><code>{name}</code></h1>", render_text(doc, anchors, pages, here), "<h2>Contents</h2><ul>"]
    body += [f'<li><a href="#{entry.anchor}"><code>{entry.anchor}</code></a> ({entry.kind})</li>' for entry in found]
    body.append("</ul>")
    for entry in found:
        body.append(f'<h3 id="{entry.anchor}"><code>{entry.anchor}</code></h3>')
        body.append(f'<pre class="sig">{render_signature(entry.signature, anchors)}</pre>')
        body.append(f'<div class="doc">{render_text(entry.doc, anchors, pages, here)}')
        for member in entry.members:
            body.append(f'<h4 id="{member.anchor}"><code>{html.escape(member.anchor)}</code></h4>')
            body.append(f'<pre class="sig">{render_signature(member.signature, anchors)}</pre>')
            body.append(render_text(member.doc, anchors, pages, here))
        body.append("</div>")
    return (f"<!doctype html><html lang=en><meta charset=utf-8><title>{name} — shardroute Python API</title>"
            f"<style>{STYLE}</style><nav><a href=\"../index.html\">shardroute API reference</a><ul>{nav}</ul></nav>"
            + "\n".join(body) + "</html>\n")


INDEX = """<!doctype html><html lang=en><meta charset=utf-8><title>shardroute API reference</title><style>{style}</style>
<h1>shardroute API reference</h1>
<p>Generated by <code>make docs</code> from the sources; the packages' READMEs teach each call with an example.</p>
<ul>
<li><a href="rust/shardroute/index.html">Rust: the <code>shardroute</code> crate</a> (rustdoc)</li>
<li><a href="python/index.html">Python: the <code>shardroute</code> package</a> (from <code>__init__.pyi</code> and the docstrings)</li>
<li><a href="typescript/index.html">TypeScript: <code>shardroute</code> and <code>shardroute-wasm</code></a> (from <code>index.d.ts</code> and the other declarations)</li>
</ul></html>
"""


def main() -> None:
    """Writes OUT/python/*.html, OUT/index.html (the three references) and
    OUT/rust/index.html (to the crate's page: rustdoc makes none at its root)."""
    out = Path(sys.argv[1])
    python = out / "python"
    python.mkdir(parents=True, exist_ok=True)
    pages = {name: ("index.html" if name == "shardroute" else f"{name}.html") for name, _ in MODULES}
    counts = []
    read = {name: entries(name, source) for name, source in MODULES}
    for name, (_, found) in read.items():
        ANCHORS[name] = {entry.anchor for entry in found} | {m.anchor for entry in found for m in entry.members}
    for name, (doc, found) in read.items():
        (python / pages[name]).write_text(page(name, doc, found, pages), encoding="utf-8")
        counts.append(f"{name} {len(found)}")
    (out / "index.html").write_text(INDEX.format(style=STYLE), encoding="utf-8")
    (out / "rust").mkdir(exist_ok=True)
    (out / "rust" / "index.html").write_text(
        '<!doctype html><meta charset=utf-8><meta http-equiv="refresh" content="0; url=shardroute/index.html">'
        '<a href="shardroute/index.html">shardroute</a>\n', encoding="utf-8")
    print(f"python API: {', '.join(counts)} names -> {python}")


if __name__ == "__main__":
    main()
